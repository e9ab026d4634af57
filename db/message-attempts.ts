import type { Knex } from 'knex';

export interface AttemptRecord {
  messageId: string;
  routeId: number;
  outcome: 'accepted' | 'rejected' | 'retryable';
  errorCode?: string | null;
  errorMessage?: string | null;
  durationMs: number;
}

/** Records one submission to an upstream and counts it on the message. */
export async function recordAttempt(db: Knex, attempt: AttemptRecord): Promise<void> {
  await db('message_attempts').insert({
    message_id: attempt.messageId,
    route_id: attempt.routeId,
    outcome: attempt.outcome,
    error_code: attempt.errorCode ?? null,
    error_message: attempt.errorMessage ?? null,
    duration_ms: Math.round(attempt.durationMs),
  });
  await db('messages').where({ id: attempt.messageId }).increment('attempts', 1);
}
