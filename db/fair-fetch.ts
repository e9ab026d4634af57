import type { GroupConcurrencyConfig, JobWithMetadata, PgBoss } from 'pg-boss';

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
 * as its fetch does: checked against pg-boss 12.35.0 (its `job` table's states, `start_after`,
 * `group_id`, `group_tier`, `blocked`, and `job_now()`); test/db/fair-fetch.test.ts fails when an
 * upgrade changes what a claimed job looks like. Jobs are claimed by a guarded update, so two
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
