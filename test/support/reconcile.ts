import { jobQueueOf, QUEUES } from '../../db/queues.ts';
import { STRANDED_BATCH } from '../../db/stranded.ts';
import { reconcileMessages } from '../../domain/reconciliation.ts';
import { eventually } from './fixtures.ts';
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

const dueSendJobs = async () =>
  Number((await harness.db('pgboss.job').where({ name: QUEUES.sendMessage.name, state: 'created' }).where('start_after', '<=', harness.db.fn.now()).count({ n: '*' }))[0].n);

/**
 * A suite's `before` hook: reconciles what earlier tests left pending (about 400 messages midway
 * through a full run) and waits until every send job that this hands out has run once. A test's
 * own reconciliation then waits for its own message alone: its job is written last and would
 * otherwise run after all of theirs, which took 3 s in one full run and more than 10 s in a slower
 * hour. The deadline only bounds a failing run.
 */
export async function settleEarlierTests(this: Mocha.Context): Promise<void> {
  this.timeout(150_000);
  await reconcileAll();
  await eventually(dueSendJobs, (due) => due === 0, { timeoutMs: 120_000, what: "the send jobs given to earlier tests' stranded messages to run" });
}
