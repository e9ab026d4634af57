import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_endpoints (
      id               text PRIMARY KEY,
      account_id       text NOT NULL REFERENCES accounts (id),
      url              text NOT NULL,
      description      text,
      events           text[] NOT NULL,
      -- The HMAC key itself: it must be readable to sign, so it is stored as given and never answered again.
      signing_secret   text NOT NULL,
      is_active        boolean NOT NULL DEFAULT true,
      failure_count    integer NOT NULL DEFAULT 0 CHECK (failure_count >= 0),
      last_success_at  timestamptz,
      last_failure_at  timestamptz,
      disabled_at      timestamptz,
      deleted_at       timestamptz,
      created_at       timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

    -- One delivery per event and endpoint; each try is an attempt row.
    CREATE TABLE webhook_deliveries (
      id           bigserial PRIMARY KEY,
      endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id),
      event_id     text NOT NULL REFERENCES events (id),
      status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'abandoned')),
      attempts     integer NOT NULL DEFAULT 0,
      created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
      finished_at  timestamptz,
      UNIQUE (endpoint_id, event_id)
    );
    CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id) WHERE status = 'pending';

    CREATE TABLE webhook_attempts (
      id           text PRIMARY KEY,
      delivery_id  bigint NOT NULL REFERENCES webhook_deliveries (id),
      endpoint_id  text NOT NULL REFERENCES webhook_endpoints (id),
      event_id     text NOT NULL REFERENCES events (id),
      attempt      integer NOT NULL CHECK (attempt >= 1),
      succeeded    boolean NOT NULL,
      status_code  integer,
      error        text,
      duration_ms  integer NOT NULL,
      created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE webhook_attempts, webhook_deliveries, webhook_endpoints');
}
