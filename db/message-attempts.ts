import type { Knex } from 'knex';
import { stillIn, type MessageRow } from './messages.ts';

export type SubmissionOutcome = 'accepted' | 'rejected' | 'retryable' | 'unknown';

export interface SubmissionRow {
  id: number;
  route_id: number;
  outcome: SubmissionOutcome | 'submitting';
}

export interface SubmissionResult {
  outcome: SubmissionOutcome;
  errorCode?: string | null;
  errorMessage?: string | null;
  durationMs?: number;
}

/**
 * Records that messages are about to be handed to upstreams, in one statement that commits
 * before the network calls: a process that dies before settling one leaves a row that says the
 * upstream may have the message. The message row is not written here: its count of submissions
 * moves when the submission is settled, with the message's own change (markMessagesSent), so
 * that a message is written once per submission, not twice. Answers the submission ids in order.
 *
 * Only a message still pending is begun, under a share lock of its row: a cancel (which locks the
 * row for update, then looks for submissions) and a submission are ordered by the row, so that a
 * message is either canceled and never begun, or begun and no longer cancelable. A message that
 * was not begun answers undefined.
 */
export async function beginSubmissions(db: Knex, submissions: { messageId: string; routeId: number }[]): Promise<(number | undefined)[]> {
  const messageIds = submissions.map(({ messageId }) => messageId);
  const { rows } = await db.raw<{ rows: { id: string; message_id: string }[] }>(
    `INSERT INTO message_attempts (message_id, route_id, outcome)
     SELECT i.message_id, i.route_id, 'submitting' FROM unnest(?::text[], ?::integer[]) AS i (message_id, route_id)
     JOIN messages m ON m.id = i.message_id AND m.id = ANY(?::text[]) AND ${stillIn('m', 'pending')} FOR SHARE OF m
     RETURNING id, message_id`,
    [messageIds, submissions.map(({ routeId }) => routeId), messageIds],
  );
  const ids = new Map(rows.map((row) => [row.message_id, Number(row.id)]));
  // A message twice in one statement would leave one of its ids unanswered: the caller begins those one by one.
  if (new Set(messageIds).size !== submissions.length) throw new Error('a message was begun twice in one batch');
  return submissions.map(({ messageId }) => ids.get(messageId));
}

export async function beginSubmission(db: Knex, messageId: string, routeId: number): Promise<number | undefined> {
  const [id] = await beginSubmissions(db, [{ messageId, routeId }]);
  return id;
}

/**
 * What came of a submission; only a row still 'submitting' changes, so a result is recorded once,
 * and counted once on its message. With `pendingError`, a message still pending shows it as its
 * last error, in the same statement.
 */
export async function settleSubmission(
  db: Knex,
  attemptId: number,
  result: SubmissionResult,
  pendingError?: NonNullable<MessageRow['error']>,
): Promise<boolean> {
  const { rows } = await db.raw<{ rows: { count: number }[] }>(
    `WITH settled AS (
       UPDATE message_attempts SET outcome = :outcome, error_code = :errorCode, error_message = :errorMessage, duration_ms = :durationMs
       WHERE id = :attemptId AND outcome = 'submitting' RETURNING message_id),
     counted AS (
       UPDATE messages SET attempts = attempts + 1,
         error = CASE WHEN CAST(:pendingError AS jsonb) IS NOT NULL AND messages.status = 'pending' THEN CAST(:pendingError AS jsonb) ELSE messages.error END
       FROM settled WHERE messages.id = settled.message_id)
     SELECT count(*)::int AS count FROM settled`,
    {
      attemptId,
      outcome: result.outcome,
      errorCode: result.errorCode ?? null,
      errorMessage: result.errorMessage ?? null,
      durationMs: result.durationMs === undefined ? null : Math.round(result.durationMs),
      pendingError: pendingError ? JSON.stringify(pendingError) : null,
    },
  );
  return rows[0].count > 0;
}

/** The message's submissions, oldest first. */
export async function submissionsOf(db: Knex, messageId: string): Promise<SubmissionRow[]> {
  return db('message_attempts').where({ message_id: messageId }).orderBy('id').select('id', 'route_id', 'outcome');
}
