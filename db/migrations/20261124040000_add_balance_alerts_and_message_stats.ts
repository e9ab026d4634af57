import type { Knex } from 'knex';

/**
 * The message statistics (GET /stats) are counters kept by triggers in the transaction that
 * inserts or moves messages, never a scan of messages. Statement-level triggers with transition
 * tables: a bulk insert of 1,000 messages adds to its counter rows once, not 1,000 times. Every
 * backend adds to rows of its own (stripe = its pid), as message_counts does, so concurrent sends
 * and workers never wait on one counter row; a read sums the stripes.
 *
 * Latency is counted in fixed log-spaced buckets of created_at to delivered_at: bucket 0 is under
 * 50 ms, bucket i (1..33) is [50 ms * 2^((i-1)/2), 50 ms * 2^(i/2)), bucket 34 is everything
 * above (from about 77 minutes). domain/stats.ts reads them with the same edges.
 */
export const keyed = (changes: string) => `
  keyed AS (
    SELECT sign, account_id, date_trunc('hour', created_at AT TIME ZONE 'UTC') AS hour, coalesce(route_id, 0) AS route_id,
           coalesce(country, '') AS country, status, cost,
           CASE WHEN status IN ('failed', 'undelivered') THEN coalesce(error->>'code', 'unknown') END AS failure,
           CASE WHEN status = 'delivered' AND delivered_at IS NOT NULL THEN
             CASE WHEN delivered_at - created_at < interval '50 milliseconds' THEN 0
                  ELSE least(34, floor(2 * ln(extract(epoch FROM delivered_at - created_at) * 20) / ln(2))::int + 1) END
           END AS latency
    FROM ${changes} AS changes
  )`;

export const addToStats = (changes: string, stripe: string) => `
  WITH ${keyed(changes)},
  details AS (
    INSERT INTO message_stat_details AS d (account_id, hour, route_id, country, stripe, kind, key, count)
    SELECT account_id, hour, route_id, country, ${stripe}, kind, key, sum(sign)
    FROM keyed CROSS JOIN LATERAL (VALUES ('failure', failure), ('latency', latency::text)) AS k (kind, key)
    WHERE key IS NOT NULL
    GROUP BY account_id, hour, route_id, country, kind, key
    ON CONFLICT (account_id, hour, route_id, country, kind, key, stripe) DO UPDATE SET count = d.count + excluded.count
  )
  INSERT INTO message_stats AS s (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost)
  SELECT account_id, hour, route_id, country, ${stripe},
         coalesce(sum(sign) FILTER (WHERE status = 'pending'), 0), coalesce(sum(sign) FILTER (WHERE status = 'sent'), 0),
         coalesce(sum(sign) FILTER (WHERE status = 'delivered'), 0), coalesce(sum(sign) FILTER (WHERE status = 'failed'), 0),
         coalesce(sum(sign) FILTER (WHERE status = 'undelivered'), 0), sum(sign * cost)
  FROM keyed GROUP BY account_id, hour, route_id, country
  ON CONFLICT (account_id, hour, route_id, country, stripe) DO UPDATE SET
    pending = s.pending + excluded.pending, sent = s.sent + excluded.sent, delivered = s.delivered + excluded.delivered,
    failed = s.failed + excluded.failed, undelivered = s.undelivered + excluded.undelivered, cost = s.cost + excluded.cost`;

const COLUMNS = 'account_id, created_at, route_id, country, status, cost, error, delivered_at';
// Only what the statistics read: an update of attempts or provider_message_id alone adds nothing.
const STATS_READ = ['status', 'cost', 'route_id', "error->>'code'", 'delivered_at', 'created_at', 'country'];
const STATS_CHANGED = `(${STATS_READ.map((column) => `o.${column}`).join(', ')}) IS DISTINCT FROM (${STATS_READ.map((column) => `n.${column}`).join(', ')})`;

/**
 * The two trigger functions, counting with `add` (changes, stripe): exported for the migrations
 * that change how the counters are kept.
 */
export const countingFunctions = (add: (changes: string, stripe: string) => string) => `
    CREATE OR REPLACE FUNCTION count_inserted_messages() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${add(`(SELECT 1 AS sign, ${COLUMNS} FROM inserted_messages)`, 'pg_backend_pid()')};
      RETURN NULL;
    END $$;

    CREATE OR REPLACE FUNCTION count_moved_messages() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${add(
        `(SELECT -1 AS sign, ${COLUMNS.split(', ')
          .map((column) => `o.${column}`)
          .join(', ')} FROM old_messages o JOIN new_messages n USING (id) WHERE ${STATS_CHANGED}
          UNION ALL
          SELECT 1, ${COLUMNS.split(', ')
            .map((column) => `n.${column}`)
            .join(', ')} FROM old_messages o JOIN new_messages n USING (id) WHERE ${STATS_CHANGED})`,
        'pg_backend_pid()',
      )};
      RETURN NULL;
    END $$;
`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The balance under which the account is warned (event balance.low); null: never.
    ALTER TABLE accounts ADD COLUMN low_balance_threshold numeric(18, 4) CHECK (low_balance_threshold >= 0);

    -- balance.low joins the event types; the check is extended rather than restated, so that it
    -- keeps whatever types other migrations have added to it.
    DO $$
    DECLARE definition text := (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'events_type_check' AND conrelid = 'events'::regclass);
    BEGIN
      EXECUTE 'ALTER TABLE events DROP CONSTRAINT events_type_check';
      EXECUTE 'ALTER TABLE events ADD CONSTRAINT events_type_check ' || replace(definition, 'ARRAY[', 'ARRAY[''balance.low''::text, ');
    END $$;

    -- The destination country (ISO 3166 code from libphonenumber), set when a message is accepted,
    -- so that the statistics can be grouped by it; null for messages accepted before this column.
    ALTER TABLE messages ADD COLUMN country text;

    CREATE TABLE message_stats (
      account_id   text NOT NULL REFERENCES accounts (id),
      hour         timestamp NOT NULL,
      route_id     integer NOT NULL,
      country      text NOT NULL,
      stripe       integer NOT NULL,
      pending      bigint NOT NULL,
      sent         bigint NOT NULL,
      delivered    bigint NOT NULL,
      failed       bigint NOT NULL,
      undelivered  bigint NOT NULL,
      cost         numeric NOT NULL,
      PRIMARY KEY (account_id, hour, route_id, country, stripe)
    );
    CREATE INDEX message_stats_hour_idx ON message_stats (hour);

    -- Failures by error code (kind 'failure', key the code) and delivered messages by latency
    -- bucket (kind 'latency', key the bucket number).
    CREATE TABLE message_stat_details (
      account_id  text NOT NULL REFERENCES accounts (id),
      hour        timestamp NOT NULL,
      route_id    integer NOT NULL,
      country     text NOT NULL,
      stripe      integer NOT NULL,
      kind        text NOT NULL CHECK (kind IN ('failure', 'latency')),
      key         text NOT NULL,
      count       bigint NOT NULL,
      PRIMARY KEY (account_id, hour, route_id, country, kind, key, stripe)
    );
    CREATE INDEX message_stat_details_hour_idx ON message_stat_details (hour);

    ${countingFunctions(addToStats)}
    -- Backfilled from the messages as they stand: no message may be written meanwhile.
    LOCK TABLE messages IN SHARE MODE;
    ${addToStats(`(SELECT 1 AS sign, ${COLUMNS} FROM messages)`, '0')};

    CREATE TRIGGER messages_stats_insert AFTER INSERT ON messages
      REFERENCING NEW TABLE AS inserted_messages FOR EACH STATEMENT EXECUTE FUNCTION count_inserted_messages();
    CREATE TRIGGER messages_stats_update AFTER UPDATE ON messages
      REFERENCING OLD TABLE AS old_messages NEW TABLE AS new_messages FOR EACH STATEMENT EXECUTE FUNCTION count_moved_messages();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER messages_stats_update ON messages;
    DROP TRIGGER messages_stats_insert ON messages;
    DROP FUNCTION count_moved_messages(), count_inserted_messages();
    DROP TABLE message_stat_details, message_stats;
    ALTER TABLE messages DROP COLUMN country;
    DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE e.type = 'balance.low');
    DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM events WHERE type = 'balance.low');
    DELETE FROM events WHERE type = 'balance.low';
    DO $$
    DECLARE definition text := (SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'events_type_check' AND conrelid = 'events'::regclass);
    BEGIN
      EXECUTE 'ALTER TABLE events DROP CONSTRAINT events_type_check';
      EXECUTE 'ALTER TABLE events ADD CONSTRAINT events_type_check ' || replace(definition, '''balance.low''::text, ', '');
    END $$;
    ALTER TABLE accounts DROP COLUMN low_balance_threshold;
  `);
}
