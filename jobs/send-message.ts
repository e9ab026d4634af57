import type { PgBoss } from 'pg-boss';
import { QUEUES } from '../db/queues.ts';
import { submitMessage, type SubmitDependencies } from '../domain/submission.ts';

export interface SendDependencies extends SubmitDependencies {
  /** An unexpected failure while sending; the job is retried. */
  onError: (error: unknown, messageId: string) => void;
}

/**
 * Each of LOCAL_WORKERS fetches BATCH_SIZE jobs and sends them concurrently, fetching again at
 * once while batches come back full (a backlog drains without polling pauses). A hanging upstream
 * holds only the worker whose batch it is in, for at most its timeout.
 */
const BATCH_SIZE = 4;
const LOCAL_WORKERS = 8;

export async function startSendWorker(boss: PgBoss, deps: SendDependencies): Promise<void> {
  await boss.work(
    QUEUES.sendMessage.name,
    {
      batchSize: BATCH_SIZE,
      localConcurrency: LOCAL_WORKERS,
      burstWhenBatchFull: true,
      includeMetadata: true,
      perJobResults: true,
      // New jobs wake a worker through NOTIFY; this poll only picks up retries whose delay has passed.
      notifyPollingIntervalSeconds: 2,
    },
    (jobs) =>
      Promise.all(
        jobs.map(async (job) => {
          const { message_id: messageId } = job.data as { message_id: string };
          const outcome = await submitMessage(deps, messageId, job.retryCount >= job.retryLimit).catch((error: unknown) => {
            deps.onError(error, messageId);
            return error;
          });
          if (outcome === 'done') return { id: job.id, status: 'completed' as const };
          // pg-boss retries a failed job with backoff until its retry limit.
          return { id: job.id, status: 'failed' as const, output: { reason: outcome === 'retry' ? 'no eligible route took the message yet' : String(outcome) } };
        }),
      ),
  );
}
