import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { QUEUES, type JobQueue } from '../db/queues.ts';
import { reconcileMessages } from '../domain/reconciliation.ts';

export interface ReconcileDependencies {
  db: Knex;
  jobs: JobQueue;
  /** What was found stranded and given work again, for the log. */
  onReconciled: (counts: { messages: number }) => void;
}

/** Every minute, in one process of however many share the database. */
export async function startReconciler(boss: PgBoss, deps: ReconcileDependencies): Promise<void> {
  await boss.schedule(QUEUES.reconcile.name, '* * * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.reconcile.name, async () => {
    const messages = await reconcileMessages(deps.db, deps.jobs);
    if (messages > 0) deps.onReconciled({ messages });
  });
}
