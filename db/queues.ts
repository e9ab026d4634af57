import type { Knex } from 'knex';
import { PgBoss, fromKnex, type QueueOptions } from 'pg-boss';

/** Every background queue, with its options, in one table. */
export const QUEUES = {
  // Retried with backoff for about 15 minutes (8 retries, 5 s doubling to at most 5 min) when every route failed retryably.
  sendMessage: { name: 'send-message', options: { retryLimit: 8, retryDelay: 5, retryBackoff: true, retryDelayMax: 300 } },
  // Each attempt is its own job, scheduled by the delivery rules; pg-boss retries only an attempt
  // whose process died (the job expired while active).
  deliverWebhook: { name: 'deliver-webhook', options: { retryLimit: 3, retryDelay: 1 } },
  // Daily: events past their retention, and delivery reports that never found their message, are deleted.
  dailyPurge: { name: 'daily-purge', options: { retryLimit: 2, retryDelay: 600 } },
} satisfies Record<string, { name: string; options: QueueOptions }>;

export type QueueKey = keyof typeof QUEUES;

/** Writes jobs in the caller's transaction: they exist exactly when the transaction commits. */
export interface JobQueue {
  enqueue(trx: Knex.Transaction, queue: QueueKey, data: object, startAfter?: Date): Promise<void>;
  enqueueMany(trx: Knex.Transaction, queue: QueueKey, data: object[]): Promise<void>;
}

/** Options every job of a queue gets that depend on configuration (such as how long an attempt may run). */
export type JobDefaults = Partial<Record<QueueKey, { expireInSeconds?: number }>>;

export const jobQueueOf = (boss: PgBoss, defaults: JobDefaults = {}): JobQueue => ({
  async enqueue(trx, queue, data, startAfter) {
    await boss.send(QUEUES[queue].name, data, { db: fromKnex(trx), ...defaults[queue], ...(startAfter && { startAfter }) });
  },
  async enqueueMany(trx, queue, data) {
    if (data.length > 0) await boss.insert(QUEUES[queue].name, data.map((item) => ({ data: item, ...defaults[queue] })), { db: fromKnex(trx) });
  },
});

/**
 * Starts pg-boss on its own pool and creates the queues. LISTEN/NOTIFY (and `notify` on each
 * queue) wakes a worker within milliseconds of a job's commit instead of at its next poll.
 */
export async function startQueues(databaseUrl: string, onError: (error: Error) => void): Promise<PgBoss> {
  // Supervision every 10 s (not 60) returns the jobs of a process that died to the queue sooner.
  const boss = new PgBoss({ connectionString: databaseUrl, useListenNotify: true, superviseIntervalSeconds: 10 });
  boss.on('error', onError);
  await boss.start();
  for (const { name, options } of Object.values(QUEUES)) {
    if (await boss.getQueue(name)) await boss.updateQueue(name, { ...options, notify: true });
    else await boss.createQueue(name, { ...options, notify: true });
  }
  return boss;
}
