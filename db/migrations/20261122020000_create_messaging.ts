import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The route the caller named; when set it is the only route tried.
    ALTER TABLE messages ADD COLUMN requested_route_id integer REFERENCES routes (id);

    -- One row per submission to an upstream, so an operator can see why a message failed over.
    CREATE TABLE message_attempts (
      id             bigserial PRIMARY KEY,
      message_id     text NOT NULL REFERENCES messages (id),
      route_id       integer NOT NULL REFERENCES routes (id),
      outcome        text NOT NULL CHECK (outcome IN ('accepted', 'rejected', 'retryable')),
      error_code     text,
      error_message  text,
      duration_ms    integer NOT NULL,
      created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX message_attempts_message_idx ON message_attempts (message_id, id);

    -- Every status change of a message records exactly one event, in the same transaction.
    CREATE TABLE events (
      id          text PRIMARY KEY,
      account_id  text NOT NULL REFERENCES accounts (id),
      type        text NOT NULL CHECK (type IN ('message.sent', 'message.delivered', 'message.failed')),
      message_id  text NOT NULL REFERENCES messages (id),
      data        jsonb NOT NULL,
      created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (message_id, type)
    );
    CREATE INDEX events_account_created_idx ON events (account_id, created_at DESC, id DESC);
    CREATE INDEX events_account_type_idx ON events (account_id, type, created_at DESC, id DESC);

    -- Delivery reports that arrived before the submit response that names their message.
    CREATE TABLE early_reports (
      id                   bigserial PRIMARY KEY,
      route_id             integer NOT NULL REFERENCES routes (id),
      provider_message_id  text NOT NULL,
      report               jsonb NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX early_reports_lookup_idx ON early_reports (route_id, provider_message_id);

    CREATE TABLE idempotency_keys (
      account_id       text NOT NULL REFERENCES accounts (id),
      key              text NOT NULL,
      request_hash     text NOT NULL,
      response_status  integer,
      response_body    jsonb,
      created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (account_id, key)
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE idempotency_keys, early_reports, events, message_attempts;
    ALTER TABLE messages DROP COLUMN requested_route_id;
  `);
}
