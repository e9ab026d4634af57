import type { Knex } from 'knex';
import { addToStats, countingFunctions, keyed } from './20261124040000_add_balance_alerts_and_message_stats.ts';

/**
 * Delivered messages by latency bucket move from rows of message_stat_details (one per bucket) to
 * one column of message_stats: an array of the 35 buckets' counts, null while the row has counted
 * no delivery. The grouped statistics read then reads a row per group and stripe instead of a row
 * per bucket besides: 1.0 ms a statement against 1.7 on a day by hour and country with 16 stripes
 * in its last hour (pgbench, BENCHMARKS.md "Latency buckets in the counter row").
 * message_stat_details keeps the failures by code, whose codes are open-ended.
 */
const LATENCY_BUCKETS = 35;

const latencyArray = `CASE WHEN count(latency) > 0 THEN ARRAY[${Array.from({ length: LATENCY_BUCKETS }, (_, bucket) => `coalesce(sum(sign) FILTER (WHERE latency = ${bucket}), 0)`).join(', ')}] END`;

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
    -- Either may be null: nothing delivered counted.
    latency = coalesce(add_counts(s.latency, excluded.latency), s.latency, excluded.latency)`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Element by element; strict, so that the aggregate starts from its first non-null array.
    CREATE FUNCTION add_counts(a bigint[], b bigint[]) RETURNS bigint[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      AS 'SELECT array_agg(x + y ORDER BY i) FROM unnest(a, b) WITH ORDINALITY AS u (x, y, i)';
    -- What the fold sums a group's stripes with.
    CREATE AGGREGATE sum_counts(bigint[]) (SFUNC = add_counts, STYPE = bigint[], PARALLEL = SAFE);

    -- No message is counted meanwhile: a trigger that had started counting into the old rows
    -- waits here, and counts with the new functions once this commits.
    LOCK TABLE messages IN SHARE MODE;
    ALTER TABLE message_stats ADD COLUMN latency bigint[] CHECK (cardinality(latency) = ${LATENCY_BUCKETS});

    -- A stripe's bucket rows may outlive its counter row for a fold's pass (the fold moves each
    -- table's rows by itself), so a row of zeros takes them then.
    WITH buckets AS (
      SELECT account_id, hour, route_id, country, stripe, key::int AS bucket, sum(count) AS count
      FROM message_stat_details WHERE kind = 'latency' GROUP BY 1, 2, 3, 4, 5, 6
    )
    INSERT INTO message_stats AS s (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost, latency)
    SELECT g.account_id, g.hour, g.route_id, g.country, g.stripe, 0, 0, 0, 0, 0, 0, array_agg(coalesce(b.count, 0) ORDER BY slot)
    FROM (SELECT DISTINCT account_id, hour, route_id, country, stripe FROM buckets) AS g
      CROSS JOIN generate_series(0, ${LATENCY_BUCKETS - 1}) AS slot
      LEFT JOIN buckets b ON (b.account_id, b.hour, b.route_id, b.country, b.stripe, b.bucket) = (g.account_id, g.hour, g.route_id, g.country, g.stripe, slot)
    GROUP BY 1, 2, 3, 4, 5
    ON CONFLICT (account_id, hour, route_id, country, stripe) DO UPDATE SET latency = excluded.latency;
    DELETE FROM message_stat_details WHERE kind = 'latency';
    ALTER TABLE message_stat_details DROP CONSTRAINT message_stat_details_kind_check, ADD CONSTRAINT message_stat_details_kind_check CHECK (kind = 'failure');

    ${countingFunctions(addToStatsWithLatencyColumn)}
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
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
  `);
}
