import type { PgBoss } from 'pg-boss';
import { QUEUES } from '../db/queues.ts';
import { ROUTE_CONCURRENCY } from '../db/send-groups.ts';
import { submitMessage, type SubmitDependencies } from '../domain/submission.ts';
import { startSingleJobWorker } from './single-job-worker.ts';

export interface SendDependencies extends SubmitDependencies {
  /** An unexpected failure while sending; the job is retried. */
  onError: (error: unknown, messageId: string) => void;
}

/**
 * Each worker sends one message at a time, so that no message waits for another's upstream, and
 * the jobs of one first-choice route hold at most ROUTE_CONCURRENCY of them: with twice as many
 * workers, a hanging route leaves at least half of them to every other route.
 */
const SEND_WORKERS = 2 * ROUTE_CONCURRENCY;

export async function startSendWorker(boss: PgBoss, deps: SendDependencies): Promise<void> {
  const options = {
    groupConcurrency: ROUTE_CONCURRENCY,
    // New jobs wake a worker through NOTIFY; this poll only picks up retries whose delay has passed.
    notifyPollingIntervalSeconds: 2,
  };
  for (let i = 0; i < SEND_WORKERS; i++) {
    await startSingleJobWorker<{ message_id: string }>(boss, QUEUES.sendMessage.name, options, async (job) => {
      const messageId = job.data.message_id;
      const outcome = await submitMessage(deps, messageId, job.retryCount >= job.retryLimit).catch((error: unknown) => {
        deps.onError(error, messageId);
        throw error;
      });
      // Thrown, the job fails and pg-boss retries it with backoff until its retry limit.
      if (outcome === 'retry') throw new Error('no eligible route took the message yet');
    });
  }
}
