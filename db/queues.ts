import type { Knex } from 'knex';
import { PgBoss, type JobOptions, type QueueOptions } from 'pg-boss';
import { runPrepared, sideBySide, statementName } from './batching.ts';

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
 * Where an enqueuing transaction announces, by queue name, jobs that are due at once, so that a
 * process's job dispatcher (jobs/job-dispatcher.ts) fetches them within milliseconds of the commit
 * rather than at its next poll. PostgreSQL delivers it only on commit, once per transaction and queue.
 */
export const JOBS_CHANNEL = 'dispatch_jobs';

const announce = (trx: Knex.Transaction, queue: QueueKey) => trx.raw('SELECT pg_notify(?, ?)', [JOBS_CHANNEL, QUEUES[queue].name]);
const dueNow = (options?: PerJobOptions) => !(options?.startAfter instanceof Date) || options.startAfter <= new Date();

const MAX_PREPARED = 200;
const preparedNames = new Map<string, string>();

/**
 * pg-boss plans its fetch, insert and completion anew on every call, 0.3 to 0.6 ms each: a tenth
 * of PostgreSQL's CPU while sends arrive (pg_stat_statements with track_planning). Its texts differ only by queue and batch size, so each text with
 * parameters becomes a prepared statement on the connections that run it. A text without
 * parameters may hold several commands (its migrations), which cannot be prepared. The fetch's
 * text names its batch size, so a process prepares a few dozen texts (63 across the jobs and
 * message tests); past MAX_PREPARED, statements run unnamed, so that a text carrying changing
 * values could not fill the server's memory. pg-boss changes its tables only when
 * a new version of it starts; processes of the old version must restart then, as a prepared
 * statement returning whole job rows refuses a changed row.
 */
function asStatement(text: string, values: unknown[] | undefined): { name?: string; text: string; values?: unknown[] } {
  if (!values?.length) return { text, values };
  if (!preparedNames.has(text) && preparedNames.size < MAX_PREPARED) preparedNames.set(text, statementName('pgboss', text));
  return { name: preparedNames.get(text), text, values };
}

/** pg-boss's statements in the caller's transaction, prepared. */
const inTransaction = (trx: Knex.Transaction) => ({
  executeSql: async (text: string, values?: unknown[]) => ({ rows: await runPrepared(trx, asStatement(text, values)) }),
});

/** pg-boss's own pool runs its statements prepared too. */
function prepareStatements(boss: PgBoss): void {
  const db = boss.getDb() as { pool?: { query: (statement: object) => Promise<unknown> }; executeSql: (text: string, values?: unknown[]) => Promise<unknown> };
  const unprepared = db.executeSql.bind(db);
  db.executeSql = (text, values) => (db.pool ? db.pool.query(asStatement(text, values)) : unprepared(text, values));
}

export const jobQueueOf = (boss: PgBoss, defaults: JobDefaults = {}): JobQueue => ({
  async enqueue(trx, queue, data, options) {
    await boss.send(QUEUES[queue].name, data, { db: inTransaction(trx), ...defaults[queue], ...options });
    if (dueNow(options)) await announce(trx, queue);
  },
  async enqueueMany(trx, queue, data, optionsOf) {
    if (data.length === 0) return;
    const jobs = data.map((item, index) => ({ data: item, ...defaults[queue], ...optionsOf?.(item, index) }));
    // Side by side: on a pipelining connection (db/connection.ts) the two statements take one round trip.
    await sideBySide([boss.insert(QUEUES[queue].name, jobs, { db: inTransaction(trx) }), jobs.some(dueNow) && announce(trx, queue)]);
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

/**
 * A SELECT of the values, as text, that the jobs of `queue` still waiting, retrying or running
 * carry in `fields` of their data, each field holding one value or an array of them. A scan over
 * many rows takes its set difference with this (`EXCEPT`), which PostgreSQL computes once, by
 * hashing or sorting, whatever its statistics say. Asked row by row, as a scan planned on
 * statistics that predate a backlog would, the search grows with the backlog squared (32,000
 * messages with their live jobs: 50 s a pass, and 102 s with the statistics of an empty queue,
 * against 0.1 s).
 */
export function liveJobValues(queue: QueueKey, fields: string[]): string {
  // In lax mode `[*]` also reads a lone value as an array of one.
  const carried = fields.map((field) => `jsonb_path_query_array(j.data, '$.${field}[*]')`).join(' || ');
  return `SELECT carried.value FROM pgboss.job j, jsonb_array_elements_text(${carried}) AS carried (value)
    WHERE j.name = '${QUEUES[queue].name}' AND j.state IN ('created', 'retry', 'active')`;
}

/**
 * A SQL condition true when no live job of `queue` carries `column`'s value (see liveJobValues):
 * the row it concerns will not be moved by any job. For one row; a scan takes a set difference.
 */
export function noLiveJob(queue: QueueKey, fields: string[], column: string): string {
  return `NOT EXISTS (SELECT 1 FROM (${liveJobValues(queue, fields)}) AS live WHERE live.value = (${column})::text)`;
}
