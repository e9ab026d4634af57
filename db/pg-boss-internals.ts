import type { Knex } from 'knex';
import type { GroupConcurrencyConfig, JobWithMetadata, PgBoss } from 'pg-boss';
import { runPrepared, statementName } from './statements.ts';

/*
 * Everything of Dispatch's that reaches past pg-boss's public API, in one place. Checked against
 * pg-boss 12.35.0, the version package.json pins; test/db/pg-boss-internals.test.ts fails when an
 * upgrade changes what this relies on. What it relies on, and why the public API did not serve:
 *
 * - `getDb()`'s `executeSql` and `pool`: every statement pg-boss runs is prepared (planning them
 *   anew was a tenth of PostgreSQL's CPU), and the `db` option's adapter runs them in the caller's
 *   transaction. The public API takes an adapter but prepares nothing.
 * - The `pgboss.job` table (its states, `name`, `data`, `start_after`, `started_on`,
 *   `created_on`, `group_id`, `group_tier`, `priority`, `blocked`) and `pgboss.job_now()`: the
 *   reconciler's set difference against the live jobs, the queue depths the metrics read, a
 *   fetch that takes turns between groups, and when the next job waiting to start falls due,
 *   none of which the public API offers.
 */

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
export const inTransaction = (trx: Knex.Transaction) => ({
  executeSql: async (text: string, values?: unknown[]) => ({ rows: await runPrepared(trx, asStatement(text, values)) }),
});

/** pg-boss's own pool runs its statements prepared too. */
export function prepareStatements(boss: PgBoss): void {
  const db = boss.getDb() as { pool?: { query: (statement: object) => Promise<unknown> }; executeSql: (text: string, values?: unknown[]) => Promise<unknown> };
  const unprepared = db.executeSql.bind(db);
  db.executeSql = (text, values) => (db.pool ? db.pool.query(asStatement(text, values)) : unprepared(text, values));
}

/**
 * Jobs waiting or running per queue, and in seconds how long the oldest of them has waited since
 * it became due (created, retry) or run since it started (active). A job scheduled for later
 * (a webhook retry hours away) is counted but is not late: its wait starts when it is due.
 */
export async function queueDepths(db: Knex, queues: string[]): Promise<{ name: string; state: string; count: number; oldest_seconds: number }[]> {
  const result = await db.raw<{ rows: { name: string; state: string; count: number; oldest_seconds: number }[] }>(
    `SELECT name, state, count(*)::int AS count,
       coalesce(extract(epoch FROM now() - min(CASE WHEN state = 'active' THEN coalesce(started_on, created_on) ELSE start_after END)
         FILTER (WHERE state = 'active' OR start_after <= now())), 0)::float AS oldest_seconds
     FROM pgboss.job WHERE name = ANY(?) AND state IN ('created', 'retry', 'active') GROUP BY name, state`,
    [queues],
  );
  return result.rows;
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
export function liveJobValues(queue: string, fields: string[], { startedOnly = false } = {}): string {
  // In lax mode `[*]` also reads a lone value as an array of one.
  const carried = fields.map((field) => `jsonb_path_query_array(j.data, '$.${field}[*]')`).join(' || ');
  // With `startedOnly`, a job created to start later is left out (a retry's is kept).
  const started = startedOnly ? ` AND (j.state <> 'created' OR j.start_after <= now())` : '';
  return `SELECT carried.value FROM pgboss.job j, jsonb_array_elements_text(${carried}) AS carried (value)
    WHERE j.name = '${queue}' AND j.state IN ('created', 'retry', 'active')${started}`;
}

/**
 * A SQL condition true when no live job of `queue` carries `column`'s value (see liveJobValues):
 * the row it concerns will not be moved by any job. For one row; a scan takes a set difference.
 */
export function noLiveJob(queue: string, fields: string[], column: string): string {
  return `NOT EXISTS (SELECT 1 FROM (${liveJobValues(queue, fields)}) AS live WHERE live.value = (${column})::text)`;
}

/**
 * Milliseconds until the next job of `queue` waiting to start later (a scheduled send, a retry's
 * delay) falls due by the database's clock, or undefined when none waits. pg-boss announces
 * nothing when a job falls due, and its public API does not say when one will.
 */
export async function untilNextStart(boss: PgBoss, queue: string): Promise<number | undefined> {
  const { rows } = await boss.getDb().executeSql(UNTIL_NEXT_START, [queue]);
  return (rows as { ms: number | null }[])[0]?.ms ?? undefined;
}

// The conditions of pg-boss's partial index over waiting jobs, so that this reads only that index.
const UNTIL_NEXT_START = `
  SELECT extract(epoch FROM min(start_after) - pgboss.job_now())::float * 1000 AS ms
  FROM pgboss.job WHERE name = $1 AND state < 'active' AND NOT blocked AND start_after > pgboss.job_now()`;

export interface TurnOptions {
  /** Jobs of one group in flight at once, across every process: by the job's group tier, or the default. */
  groupConcurrency: GroupConcurrencyConfig;
  /** Only jobs of this priority or higher. */
  minPriority?: number;
  /** The field of a job's data that names its owner (an account): owners take turns after groups do. */
  ownerField: string;
}

/**
 * Claims up to `batchSize` due jobs of `queue`, taking turns: first by group, so that a job that
 * would be its group's first in flight goes before any group's second, then by owner, so that an
 * owner with fewer jobs in flight goes first, and then by due time. A group at its cap waits.
 *
 * pg-boss's own fetch with `groupConcurrency` serves jobs first-come: it takes the oldest
 * `batchSize` due jobs and only then drops those past their group's cap. One group with many old
 * jobs queued fills that window, so a fetch returns one job of it and every younger job of an
 * idle group (a new endpoint's first event, a retry that just fell due) waits behind the whole
 * queue. Its public API has no other order, so this reads and claims pg-boss's job table itself,
 * as its fetch does. Jobs are claimed by a guarded update, so two
 * processes fetching at once never claim one job twice; like pg-boss's, the cap is counted as of
 * the fetch and may be passed by one when they race.
 */
export async function fetchInTurn<Data>(boss: PgBoss, queue: string, batchSize: number, options: TurnOptions): Promise<JobWithMetadata<Data>[]> {
  const { rows } = await boss
    .getDb()
    .executeSql(FETCH_IN_TURN, [
      queue,
      batchSize,
      options.minPriority ?? -2147483648,
      options.groupConcurrency.default,
      JSON.stringify(options.groupConcurrency.tiers ?? {}),
      options.ownerField,
    ]);
  return rows as JobWithMetadata<Data>[];
}

// $1 queue, $2 batch size, $3 minimum priority, $4 default group cap, $5 caps by tier, $6 owner field.
const FETCH_IN_TURN = `
  WITH active AS MATERIALIZED (
    SELECT group_id, data ->> $6::text AS owner FROM pgboss.job WHERE name = $1 AND state = 'active'
  ),
  group_active AS MATERIALIZED (SELECT group_id, count(*)::int AS n FROM active WHERE group_id IS NOT NULL GROUP BY group_id),
  owner_active AS MATERIALIZED (SELECT owner, count(*)::int AS n FROM active WHERE owner IS NOT NULL GROUP BY owner),
  due AS (
    SELECT j.id, j.group_id, j.group_tier, j.priority, j.start_after, j.created_on, coalesce(j.data ->> $6::text, j.group_id, j.id::text) AS owner,
      coalesce(g.n, 0) + row_number() OVER (PARTITION BY coalesce(j.group_id, j.id::text) ORDER BY j.start_after, j.created_on) AS group_turn
    FROM pgboss.job j LEFT JOIN group_active g ON g.group_id = j.group_id
    WHERE j.name = $1 AND j.state < 'active' AND NOT j.blocked AND j.start_after <= pgboss.job_now() AND j.priority >= $3
  ),
  allowed AS (
    SELECT d.*, coalesce(o.n, 0) + row_number() OVER (PARTITION BY d.owner, d.group_turn ORDER BY d.start_after, d.created_on) AS owner_turn
    FROM due d LEFT JOIN owner_active o ON o.owner = d.owner
    WHERE d.group_id IS NULL OR d.group_turn <= coalesce(($5::jsonb ->> d.group_tier)::int, $4)
  ),
  chosen AS (
    SELECT id FROM allowed ORDER BY priority DESC, group_turn, owner_turn, start_after, created_on LIMIT $2
  )
  UPDATE pgboss.job j SET
    state = 'active',
    started_on = pgboss.job_now(),
    heartbeat_on = pgboss.job_now(),
    retry_count = CASE WHEN started_on IS NOT NULL THEN retry_count + 1 ELSE retry_count END
  WHERE j.name = $1 AND j.id = ANY (ARRAY(SELECT id FROM chosen)) AND j.state < 'active'
  RETURNING j.id, j.name, j.data, j.retry_count AS "retryCount", j.expire_seconds AS "expireInSeconds",
    j.heartbeat_seconds AS "heartbeatSeconds", j.group_id AS "groupId", j.group_tier AS "groupTier", j.policy, j.state,
    j.priority, j.retry_limit AS "retryLimit", j.retry_delay AS "retryDelay", j.retry_backoff AS "retryBackoff",
    j.retry_delay_max AS "retryDelayMax", j.start_after AS "startAfter", j.started_on AS "startedOn",
    j.singleton_key AS "singletonKey", j.singleton_on AS "singletonOn", j.deletion_seconds AS "deleteAfterSeconds",
    j.heartbeat_on AS "heartbeatOn", j.created_on AS "createdOn", j.completed_on AS "completedOn",
    j.keep_until AS "keepUntil", j.dead_letter AS "deadLetter", j.blocked, j.blocking,
    j.pending_dependencies AS "pendingDependencies", j.output, j.source_name AS "sourceName", j.source_id AS "sourceId",
    j.source_created_on AS "sourceCreatedOn", j.source_retry_count AS "sourceRetryCount", j.source_output AS "sourceOutput",
    j.source_root_id AS "sourceRootId"`;
