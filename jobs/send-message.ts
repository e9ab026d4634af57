import { QUEUES } from '../db/queues.ts';
import { ROUTE_CONCURRENCY } from '../db/send-groups.ts';
import { submitMessage, type SubmitDependencies } from '../domain/submission.ts';
import type { JobDispatchers } from './job-dispatcher.ts';

export interface SendDependencies extends SubmitDependencies {
  /** An unexpected failure while sending; the job is retried. */
  onError: (error: unknown, messageId: string) => void;
}

/**
 * Each job sends one message, on its own, so that no message waits for another's upstream, and
 * the jobs of one first-choice route hold at most ROUTE_CONCURRENCY of the slots: with twice as
 * many slots, a hanging route leaves at least half of them to every other route.
 */
const SEND_SLOTS = 2 * ROUTE_CONCURRENCY;
// New jobs are announced; this poll only picks up retries whose delay has passed.
const SEND_POLL_MS = 2000;

export function startSendWorker(dispatchers: JobDispatchers, deps: SendDependencies): void {
  dispatchers.run<{ message_id: string }>(QUEUES.sendMessage.name, { concurrency: SEND_SLOTS, pollMs: SEND_POLL_MS, fetch: { groupConcurrency: ROUTE_CONCURRENCY } }, async (job) => {
    const messageId = job.data.message_id;
    const outcome = await submitMessage(deps, messageId, job.retryCount >= job.retryLimit).catch((error: unknown) => {
      deps.onError(error, messageId);
      throw error;
    });
    // Thrown, the job fails and pg-boss retries it with backoff until its retry limit.
    if (outcome === 'retry') throw new Error('no eligible route took the message yet');
  });
}
