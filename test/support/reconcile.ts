import type { Dispatch } from '../../app/server.ts';
import { jobQueueOf } from '../../db/queues.ts';
import { reconcileMessages } from '../../domain/reconciliation.ts';
import { startInstance } from './harness.ts';
import { siblingDatabase } from './sibling-database.ts';

/**
 * A Dispatch of a suite's own, on a database of its own: what its reconciler finds and the send
 * jobs it hands out are the suite's alone, whatever earlier tests left in the run's database.
 */
export async function quietInstance(): Promise<{ dispatch: Dispatch; stop: () => Promise<void> }> {
  const database = await siblingDatabase();
  const dispatch = await startInstance(database.url);
  return {
    dispatch,
    stop: async () => {
      await dispatch.stop();
      await database.drop();
    },
  };
}

/** Reconciles every stranded message of the instance's database; answers how many were given a job. */
export const reconcileAll = (dispatch: Dispatch): Promise<number> => reconcileMessages(dispatch.db, jobQueueOf(dispatch.boss));
