import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { QUEUES, type JobQueue } from '../db/queues.ts';
import { storeWaitedOutParts } from '../domain/inbound-parts.ts';
import { reconcileMessages } from '../domain/reconciliation.ts';
import { reconcileWebhookDeliveries, type DeliveryRules } from '../domain/webhook-deliveries.ts';

export interface ReconcileDependencies {
  db: Knex;
  jobs: JobQueue;
  webhookRules: Pick<DeliveryRules, 'retrySchedule' | 'disableAfter'>;
  /** How long parts of a concatenated inbound SMS wait for their siblings. */
  inboundPartTimeoutSeconds: number;
  /** What was found stranded and settled, for the log. */
  onReconciled: (counts: { messages: number; deliveries_requeued: number; deliveries_abandoned: number; inbound_incomplete: number }) => void;
}

/** Every minute, in one process of however many share the database. */
export async function startReconciler(boss: PgBoss, deps: ReconcileDependencies): Promise<void> {
  await boss.schedule(QUEUES.reconcile.name, '* * * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.reconcile.name, async () => {
    const messages = await reconcileMessages(deps.db, deps.jobs);
    const deliveries = await reconcileWebhookDeliveries(deps.db, deps.jobs, deps.webhookRules);
    const incomplete = await storeWaitedOutParts(deps.db, deps.jobs, deps.inboundPartTimeoutSeconds);
    if (messages + deliveries.requeued + deliveries.abandoned + incomplete > 0) {
      deps.onReconciled({ messages, deliveries_requeued: deliveries.requeued, deliveries_abandoned: deliveries.abandoned, inbound_incomplete: incomplete });
    }
  });
}
