import type { JobWithMetadata, PgBoss, WorkOptions } from 'pg-boss';

/**
 * One pg-boss worker that runs one job at a time, so that no job waits for a slower one fetched
 * with it, and that, having run a job, fetches the next at once rather than after its polling
 * interval (pg-boss bursts only for batches of more than one). A job whose handler throws fails
 * and is retried by its queue's rules.
 */
export async function startSingleJobWorker<Data extends object>(
  boss: PgBoss,
  queue: string,
  options: WorkOptions,
  handle: (job: JobWithMetadata<Data>) => Promise<void>,
): Promise<void> {
  let workerId = '';
  workerId = await boss.work<Data>(queue, { ...options, batchSize: 1, includeMetadata: true }, async ([job]) => {
    try {
      await handle(job as JobWithMetadata<Data>);
    } finally {
      boss.notifyWorker(workerId);
    }
  });
}
