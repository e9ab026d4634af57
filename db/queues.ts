import type { Knex } from 'knex';
import { PgBoss, fromKnex, type QueueOptions } from 'pg-boss';

/** Every background queue, with its options, in one table. */
export const QUEUES = {
  sendMessage: { name: 'send-message', options: { notify: true, retryLimit: 8, retryDelay: 5, retryBackoff: true, retryDelayMax: 300 } },
  deliverWebhook: { name: 'deliver-webhook', options: { notify: true, retryLimit: 0 } },
} satisfies Record<string, { name: string; options: QueueOptions & { notify?: boolean } }>;

export type QueueKey = keyof typeof QUEUES;

/** Starts pg-boss on its own pool, with LISTEN/NOTIFY so a job reaches its worker in milliseconds, and creates the queues. */
export async function startQueues(databaseUrl: string, onError: (error: Error) => void): Promise<PgBoss> {
  const boss = new PgBoss({ connectionString: databaseUrl, useListenNotify: true, application_name: 'dispatch-jobs' } as ConstructorParameters<typeof PgBoss>[0]);
  boss.on('error', onError);
  await boss.start();
  for (const { name, options } of Object.values(QUEUES)) {
    if (!(await boss.getQueue(name))) await boss.createQueue(name, options);
  }
  return boss;
}

/** Writes a job in the caller's transaction: it exists exactly when the transaction commits. */
export async function enqueue(boss: PgBoss, trx: Knex.Transaction, queue: QueueKey, data: object, startAfter?: Date): Promise<void> {
  await boss.send(QUEUES[queue].name, data, { db: fromKnex(trx), ...(startAfter && { startAfter }) });
}
