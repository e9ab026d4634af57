import { QUEUES } from '../db/queues.ts';
import { ROUTE_CONCURRENCY, type SendJobData } from '../db/send-groups.ts';
import { submitMessage, type SubmitDependencies } from '../domain/submission.ts';
import { SubmissionBatches } from '../domain/submission-batches.ts';
import type { JobDispatchers } from './job-dispatcher.ts';

export interface SendDependencies extends Omit<SubmitDependencies, 'batches'> {
  /** An unexpected failure while sending; the job is retried. */
  onError: (error: unknown, messageId: string) => void;
}

/**
 * Each job sends its messages at once, each on its own, so that no message waits for another's
 * upstream, and the jobs of one first-choice route hold at most ROUTE_CONCURRENCY of the slots:
 * with twice as many slots, a hanging route leaves at least half of them to every other route.
 */
const SEND_SLOTS = 2 * ROUTE_CONCURRENCY;
// New jobs are announced; when one created to start later (a scheduled send, a retry after its
// delay) falls due is looked up at least this often (jobs/job-dispatcher.ts), and it starts then.
const SEND_POLL_MS = 2000;

export function startSendWorker(dispatchers: JobDispatchers, deps: SendDependencies): void {
  const submit = { ...deps, batches: new SubmissionBatches(deps.db, deps.jobs) };
  dispatchers.run<SendJobData>(
    QUEUES.sendMessage.name,
    { concurrency: SEND_SLOTS, pollMs: SEND_POLL_MS, fetch: { groupConcurrency: ROUTE_CONCURRENCY } },
    async (job) => {
      const retriesSpent = job.retryCount >= job.retryLimit;
      const accountId = job.data.account_id;
      const outcomes = await Promise.all(
        job.data.message_ids.map((messageId) =>
          submitMessage(submit, messageId, retriesSpent, accountId).catch((error: unknown) => {
            deps.onError(error, messageId);
            return 'failed' as const;
          }),
        ),
      );
      // Thrown, the job fails and pg-boss retries it with backoff until its retry limit; its
      // messages that are no longer pending are skipped then.
      if (outcomes.includes('failed')) throw new Error('sending a message failed unexpectedly');
      if (outcomes.includes('retry')) throw new Error('no eligible route took a message yet');
    },
  );
}
