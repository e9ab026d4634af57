import type { Knex } from 'knex';

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
 * Records that a message is about to be handed to an upstream, and counts it on the message, in
 * one statement that commits before the network call: a process that dies before settling it
 * leaves a row that says the upstream may have the message.
 */
export async function beginSubmission(db: Knex, messageId: string, routeId: number): Promise<number> {
  const { rows } = await db.raw(
    `WITH counted AS (UPDATE messages SET attempts = attempts + 1 WHERE id = :messageId)
     INSERT INTO message_attempts (message_id, route_id, outcome) VALUES (:messageId, :routeId, 'submitting') RETURNING id`,
    { messageId, routeId },
  );
  return rows[0].id;
}

/** What came of a submission; only a row still 'submitting' changes, so a result is recorded once. */
export async function settleSubmission(db: Knex, attemptId: number, result: SubmissionResult): Promise<boolean> {
  const changed = await db('message_attempts')
    .where({ id: attemptId, outcome: 'submitting' })
    .update({
      outcome: result.outcome,
      error_code: result.errorCode ?? null,
      error_message: result.errorMessage ?? null,
      duration_ms: result.durationMs === undefined ? null : Math.round(result.durationMs),
    });
  return changed > 0;
}

/** The message's submissions, oldest first. */
export async function submissionsOf(db: Knex, messageId: string): Promise<SubmissionRow[]> {
  return db('message_attempts').where({ message_id: messageId }).orderBy('id').select('id', 'route_id', 'outcome');
}
