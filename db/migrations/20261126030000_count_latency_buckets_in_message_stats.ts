import type { Knex } from 'knex';
import { addToStats, countingFunctions, keyed } from './20261124040000_add_balance_alerts_and_message_stats.ts';

/**
 * Delivered messages by latency bucket move from rows of message_stat_details (one per bucket) to
 * one column of message_stats: an array of the 35 buckets' counts, null while the row has counted
 * no delivery. The grouped statistics read then reads a row per group and stripe instead of a row
 * per bucket besides: 1.0 ms a statement against 1.7 on a day by hour and country with 16 stripes
 * in its last hour (measured with pgbench).
 * message_stat_details keeps the failures by code, whose codes are open-ended.
 */
const LATENCY_BUCKETS = 35;

const latencyArray = `CASE WHEN count(latency) > 0 THEN ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, bucket) => `coalesce(sum(sign) FILTER (WHERE latency = ${bucket}), 0)`).join(', ')}] END`;

/**
 * `into`'s latency counts with `added`'s. Either may be null (nothing delivered counted); add_counts
 * is strict, so that a move without deliveries, most of the send path's, never calls it.
 */
const withAddedLatency = (into: string, added: string) => `coalesce(add_counts(${into}, ${added}), ${into}, ${added})`;

const addToStatsWithLatencyColumn = (changes: string, stripe: string) => `
  WITH ${keyed(changes)},
  failures AS (
    INSERT INTO message_stat_details AS d (account_id, hour, route_id, country, stripe, kind, key, count)
    SELECT account_id, hour, route_id, country, ${stripe}, 'failure', failure, sum(sign)
    FROM keyed WHERE failure IS NOT NULL
    GROUP BY account_id, hour, route_id, country, failure
    ON CONFLICT (account_id, hour, route_id, country, kind, key, stripe) DO UPDATE SET count = d.count + excluded.count
  )
  INSERT INTO message_stats AS s (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost, latency)
  SELECT account_id, hour, route_id, country, ${stripe},
         coalesce(sum(sign) FILTER (WHERE status = 'pending'), 0), coalesce(sum(sign) FILTER (WHERE status = 'sent'), 0),
         coalesce(sum(sign) FILTER (WHERE status = 'delivered'), 0), coalesce(sum(sign) FILTER (WHERE status = 'failed'), 0),
         coalesce(sum(sign) FILTER (WHERE status = 'undelivered'), 0), sum(sign * cost), ${latencyArray}
  FROM keyed GROUP BY account_id, hour, route_id, country
  ON CONFLICT (account_id, hour, route_id, country, stripe) DO UPDATE SET
    pending = s.pending + excluded.pending, sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
    failed = s.failed + excluded.failed, undelivered = s.undelivered + excluded.undelivered, cost = s.cost + excluded.cost,
    latency = ${withAddedLatency('s.latency', 'excluded.latency')}`;

/** The bucket of each slot, as message_stat_details keyed it. */
const arrayOfBucketRows = `ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, bucket) => `coalesce(sum(count) FILTER (WHERE key = '${bucket}'), 0)`).join(', ')}]`;

/** Bucket rows moved into their counter rows' arrays per statement, so that each holds its rows briefly. */
const MOVE_BATCH = 10_000;

/**
 * Moves up to MOVE_BATCH bucket rows into their counter rows' arrays, in one statement. A stripe whose
 * counter row a fold has already moved (each table's rows are folded by themselves) gets a row of
 * zeros that takes its buckets.
 */
const moveBucketRows = `
  WITH picked AS (
    SELECT account_id, hour, route_id, country, stripe, kind, key FROM message_stat_details WHERE kind = 'latency' LIMIT ${MOVE_BATCH} FOR UPDATE
  ), moved AS (
    DELETE FROM message_stat_details d USING picked p
    WHERE (d.account_id, d.hour, d.route_id, d.country, d.stripe, d.kind, d.key) = (p.account_id, p.hour, p.route_id, p.country, p.stripe, p.kind, p.key)
    RETURNING d.*
  ), added AS (
    INSERT INTO message_stats AS s (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost, latency)
    SELECT account_id, hour, route_id, country, stripe, 0, 0, 0, 0, 0, 0, ${arrayOfBucketRows}
    FROM moved GROUP BY account_id, hour, route_id, country, stripe
    ON CONFLICT (account_id, hour, route_id, country, stripe) DO UPDATE SET latency = ${withAddedLatency('s.latency', 'excluded.latency')}
  )
  SELECT count(*)::int AS moved FROM moved`;

// Not one transaction: sends wait only for the switch of the triggers, not for the history's
// bucket rows to move, which took 9.6 s in one transaction for a year of hours of ten groups (1.4
// million rows, PostgreSQL 15 on a 2-core machine). Each step may run again after a crash.
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  await knex.transaction(async (trx) => {
    await trx.raw(`
      -- Element by element; strict, so that the aggregate starts from its first non-null array.
      CREATE OR REPLACE FUNCTION add_counts(a bigint[], b bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
        AS 'SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS u (x, y, i)';
      -- What the fold sums a group's stripes with.
      CREATE OR REPLACE AGGREGATE sum_counts(bigint[]) (SFUNC = add_counts, STYPE = bigint[], PARALLEL = SAFE);

      -- No message is counted meanwhile: a trigger that had started counting into bucket rows
      -- finishes first, and those after count with the new functions once this commits.
      LOCK TABLE messages IN SHARE MODE;
      ALTER TABLE message_stats ADD COLUMN IF NOT EXISTS latency bigint[] CHECK (cardinality(latency) = ${LATENCY_BUCKETS});
      ${countingFunctions(addToStatsWithLatencyColumn)}
      -- From here no bucket row can be written (a fold that would write one fails, and the next
      -- finds nothing to fold), so the rows moved below are all there are.
      ALTER TABLE message_stat_details DROP CONSTRAINT message_stat_details_kind_check,
        ADD CONSTRAINT message_stat_details_kind_check CHECK (kind = 'failure') NOT VALID;
    `);
  });
  // Until the last bucket row has moved, a read sees part of the history's latencies (never of its counts).
  for (let moved = MOVE_BATCH; moved === MOVE_BATCH;) moved = (await knex.raw<{ rows: { moved: number }[] }>(moveBucketRows)).rows[0].moved;
  await knex.raw('ALTER TABLE message_stat_details VALIDATE CONSTRAINT message_stat_details_kind_check');
}

export async function down(knex: Knex): Promise<void> {
  await knex.transaction((trx) =>
    trx.raw(`
    LOCK TABLE messages IN SHARE MODE;
    ALTER TABLE message_stat_details DROP CONSTRAINT message_stat_details_kind_check, ADD CONSTRAINT message_stat_details_kind_check CHECK (kind IN ('failure', 'latency'));
    INSERT INTO message_stat_details (account_id, hour, route_id, country, stripe, kind, key, count)
    SELECT account_id, hour, route_id, country, stripe, 'latency', (slot - 1)::text, count
    FROM message_stats CROSS JOIN LATERAL unnest(latency) WITH ORDINALITY AS u (count, slot)
    WHERE count <> 0;
    ${countingFunctions(addToStats)}
    ALTER TABLE message_stats DROP COLUMN latency;
    DROP AGGREGATE sum_counts(bigint[]);
    DROP FUNCTION add_counts(bigint[], bigint[]);
  `),
  );
}
