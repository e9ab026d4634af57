import type { Knex } from 'knex';
import { PgBoss, type JobOptions, type QueueOptions } from 'pg-boss';
import { sideBySide } from './statements.ts';
import { inTransaction, prepareStatements } from './pg-boss-internals.ts';

/** Every background queue, with its options, in one table. */
export const QUEUES = {
  // Retried with backoff (5 s doubling to at most 1 min) while no route takes the message; the send
  // window (domain/submission.ts), not this limit, ends it, and the first try after it fails the
  // message within a minute of its end. The heartbeat returns the job of a process that died to
  // the queue within about 20 s instead of at its 15-minute expiry.
  sendMessage: { name: 'send-message', options: { retryLimit: 20, retryDelay: 5, retryBackoff: true, retryDelayMax: 60, heartbeatSeconds: 15 } },
  // Each attempt is its own job, scheduled by the delivery rules; pg-boss retries only an attempt
  // whose process died (the job expired while active).
  deliverWebhook: { name: 'deliver-webhook', options: { retryLimit: 3, retryDelay: 1 } },
  // Daily: events past their retention, and delivery reports that never found their message, are deleted.
  dailyPurge: { name: 'daily-purge', options: { retryLimit: 2, retryDelay: 600 } },
  // Every minute: settles messages and webhook deliveries that no live job will move.
  reconcile: { name: 'reconcile', options: { retryLimit: 0, expireInSeconds: 120 } },
  // Every ten minutes: the statistics' counters of past hours folded from every connection's stripe into one.
  foldStats: { name: 'fold-stats', options: { retryLimit: 0, expireInSeconds: 600 } },
} satisfies Record<string, { name: string; options: QueueOptions }>;

export type QueueKey = keyof typeof QUEUES;

/** What one job may set beyond its queue's options: when it may start, its group and its priority. */
export type PerJobOptions = Pick<JobOptions, 'startAfter' | 'group' | 'priority'>;

/** Writes jobs in the caller's transaction: they exist exactly when the transaction commits. */
export interface JobQueue {
  enqueue(trx: Knex.Transaction, queue: QueueKey, data: object, options?: PerJobOptions): Promise<void>;
  enqueueMany(trx: Knex.Transaction, queue: QueueKey, data: object[], optionsOf?: (item: object, index: number) => PerJobOptions): Promise<void>;
}

/** Options every job of a queue gets that depend on configuration (such as how long an attempt may run). */
export type JobDefaults = Partial<Record<QueueKey, { expireInSeconds?: number }>>;

/**
 * Where an enqueuing transaction announces its jobs by queue name, so that a process's job
 * dispatcher (jobs/job-dispatcher.ts) fetches those due at once within milliseconds of the commit
 * rather than at its next poll, and learns at once when those created to start later fall due.
 * PostgreSQL delivers it only on commit, once per transaction and payload.
 */
export const JOBS_CHANNEL = 'dispatch_jobs';
const LATER = ' later';

/** An announcement's queue, and whether its jobs start later (else at once). */
export function announced(payload: string): { queue: string; later: boolean } {
  const later = payload.endsWith(LATER);
  return { queue: later ? payload.slice(0, -LATER.length) : payload, later };
}

const announce = (trx: Knex.Transaction, queue: QueueKey, jobs: { startAfter?: unknown }[]) => {
  const now = new Date();
  const later = jobs.filter((job) => job.startAfter instanceof Date && job.startAfter > now).length;
  return sideBySide([
    later < jobs.length && trx.raw('SELECT pg_notify(?, ?)', [JOBS_CHANNEL, QUEUES[queue].name]),
    later > 0 && trx.raw('SELECT pg_notify(?, ?)', [JOBS_CHANNEL, QUEUES[queue].name + LATER]),
  ]);
};

export const jobQueueOf = (boss: PgBoss, defaults: JobDefaults = {}): JobQueue => ({
  async enqueue(trx, queue, data, options) {
    await boss.send(QUEUES[queue].name, data, { db: inTransaction(trx), ...defaults[queue], ...options });
    await announce(trx, queue, [options ?? {}]);
  },
  async enqueueMany(trx, queue, data, optionsOf) {
    if (data.length === 0) return;
    const jobs = data.map((item, index) => ({ data: item, ...defaults[queue], ...optionsOf?.(item, index) }));
    // Side by side: on a pipelining connection (db/connection.ts) the statements take one round trip.
    await sideBySide([boss.insert(QUEUES[queue].name, jobs, { db: inTransaction(trx) }), announce(trx, queue, jobs)]);
  },
});

/**
 * Starts pg-boss on its own pool and creates the queues. New jobs are announced on JOBS_CHANNEL
 * to one dispatcher per queue, not through pg-boss's own notifications, which wake every worker.
 */
export async function startQueues(databaseUrl: string, onError: (error: Error) => void): Promise<PgBoss> {
  // Supervision and monitoring every 5 s (not 60) return the jobs of a process that died, found by
  // their stale heartbeat, to the queue within seconds.
  const boss = new PgBoss({ connectionString: databaseUrl, useListenNotify: false, superviseIntervalSeconds: 5, monitorIntervalSeconds: 5 });
  boss.on('error', onError);
  prepareStatements(boss);
  await boss.start();
  for (const { name, options } of Object.values(QUEUES)) {
    if (await boss.getQueue(name)) await boss.updateQueue(name, { ...options, notify: false });
    else await boss.createQueue(name, options);
  }
  return boss;
}
