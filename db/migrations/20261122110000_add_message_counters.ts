import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Backfilled from the messages as they stand: no message may be written meanwhile.
    LOCK TABLE messages IN SHARE MODE;

    -- Each account's messages by status, so that a list's total is a read of a few rows. Every
    -- database backend adds to a row of its own (stripe = its pid), so that two transactions never
    -- write the same row; stripe 0 holds what is folded in from the others (db/messages.ts).
    CREATE TABLE message_counts (
      account_id   text NOT NULL REFERENCES accounts (id),
      stripe       integer NOT NULL,
      pending      bigint NOT NULL DEFAULT 0,
      sent         bigint NOT NULL DEFAULT 0,
      delivered    bigint NOT NULL DEFAULT 0,
      failed       bigint NOT NULL DEFAULT 0,
      undelivered  bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (account_id, stripe)
    );
    INSERT INTO message_counts (account_id, stripe, pending, sent, delivered, failed, undelivered)
    SELECT account_id, 0,
           count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'sent'),
           count(*) FILTER (WHERE status = 'delivered'), count(*) FILTER (WHERE status = 'failed'),
           count(*) FILTER (WHERE status = 'undelivered')
    FROM messages GROUP BY account_id;

    -- Messages accepted through a key per UTC day and month, kept only for keys with such a
    -- limit. A send adds to them with a guarded upsert that refuses to pass the limit.
    CREATE TABLE key_send_counts (
      api_key_id  text NOT NULL REFERENCES api_keys (id),
      period      text NOT NULL CHECK (period IN ('day', 'month')),
      starts_on   date NOT NULL,
      count       integer NOT NULL CHECK (count >= 0),
      PRIMARY KEY (api_key_id, period, starts_on)
    );
    -- The current day and month, counted as the limits counted them until now: every message of
    -- the key but those refused at acceptance (failed without a route or an attempt).
    INSERT INTO key_send_counts (api_key_id, period, starts_on, count)
    SELECT k.id, p.period, p.starts_on, count(*)
    FROM api_keys k
    CROSS JOIN LATERAL (VALUES
      ('day', date_trunc('day', now() AT TIME ZONE 'UTC')::date, k.daily_limit),
      ('month', date_trunc('month', now() AT TIME ZONE 'UTC')::date, k.monthly_limit)
    ) AS p (period, starts_on, cap)
    JOIN messages m ON m.api_key_id = k.id AND m.created_at >= p.starts_on::timestamp AT TIME ZONE 'UTC'
    WHERE p.cap IS NOT NULL AND NOT (m.status = 'failed' AND m.attempts = 0 AND m.route_id IS NULL)
    GROUP BY k.id, p.period, p.starts_on;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE key_send_counts, message_counts');
}
