import { jobQueueOf } from '../../db/queues.ts';
import { STRANDED_BATCH } from '../../db/stranded.ts';
import { reconcileMessages } from '../../domain/reconciliation.ts';
import { harness } from './harness.ts';

/**
 * Reconciles every stranded message of the suite's database, answering how many were given a job.
 * The database holds other tests' old pending messages, and a pass takes at most STRANDED_BATCH of
 * them, oldest first: passes are repeated until one takes fewer, so that a test's own message is in.
 */
export async function reconcileAll(): Promise<number> {
  let total = 0;
  for (let taken = STRANDED_BATCH; taken === STRANDED_BATCH; total += taken) taken = await reconcileMessages(harness.db, jobQueueOf(harness.dispatch.boss));
  return total;
}
