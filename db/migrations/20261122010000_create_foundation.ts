import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE accounts (
      id            text PRIMARY KEY,
      email         text NOT NULL,
      name          text NOT NULL,
      company_name  text,
      country       char(2),
      status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'closed')),
      kyc_verified  boolean NOT NULL DEFAULT false,
      balance       numeric(18, 4) NOT NULL DEFAULT 0 CHECK (balance >= 0),
      currency      char(3) NOT NULL DEFAULT 'USD',
      created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE UNIQUE INDEX accounts_email_key ON accounts (lower(email));

    -- Every change of a balance is one row here, written in the same transaction as the change:
    -- accounts.balance always equals the sum of the account's amounts.
    CREATE TABLE ledger_entries (
      id             bigserial PRIMARY KEY,
      account_id     text NOT NULL REFERENCES accounts (id),
      kind           text NOT NULL CHECK (kind IN ('credit', 'debit', 'refund', 'adjustment')),
      amount         numeric(18, 4) NOT NULL CHECK (amount <> 0),
      balance_after  numeric(18, 4) NOT NULL CHECK (balance_after >= 0),
      description    text,
      message_id     text,
      created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX ledger_entries_account_idx ON ledger_entries (account_id, id);

    CREATE TABLE api_keys (
      id             text PRIMARY KEY,
      account_id     text NOT NULL REFERENCES accounts (id),
      name           text NOT NULL,
      key_hash       bytea NOT NULL UNIQUE,
      key_hint       text NOT NULL,
      permissions    text[] NOT NULL,
      rate_limit     integer NOT NULL CHECK (rate_limit BETWEEN 1 AND 6000),
      daily_limit    integer CHECK (daily_limit >= 1),
      monthly_limit  integer CHECK (monthly_limit >= 1),
      allowed_ips    text[],
      expires_at     timestamptz,
      revoked_at     timestamptz,
      last_used_at   timestamptz,
      created_at     timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX api_keys_account_idx ON api_keys (account_id, created_at DESC, id DESC);

    CREATE TABLE senders (
      id            text PRIMARY KEY,
      account_id    text NOT NULL REFERENCES accounts (id),
      sender_id     text NOT NULL,
      type          text NOT NULL CHECK (type IN ('alphanumeric', 'numeric', 'short_code', 'long_code')),
      country_code  char(2),
      status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected', 'suspended')),
      approved_at   timestamptz,
      created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (account_id, sender_id)
    );
    CREATE INDEX senders_account_idx ON senders (account_id, created_at DESC, id DESC);

    CREATE TABLE routes (
      id                 serial PRIMARY KEY,
      name               text NOT NULL UNIQUE,
      provider           text NOT NULL CHECK (provider IN ('simulator', 'http', 'smpp')),
      config             jsonb NOT NULL,
      price_per_segment  numeric(18, 4) NOT NULL CHECK (price_per_segment >= 0),
      prefixes           text[] NOT NULL DEFAULT '{}',
      is_active          boolean NOT NULL DEFAULT true,
      dlr_token          text NOT NULL UNIQUE,
      created_at         timestamptz NOT NULL DEFAULT clock_timestamp()
    );

    CREATE TABLE account_routes (
      account_id  text NOT NULL REFERENCES accounts (id),
      route_id    integer NOT NULL REFERENCES routes (id),
      priority    integer NOT NULL CHECK (priority >= 0),
      created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (account_id, route_id),
      UNIQUE (account_id, priority)
    );

    CREATE TABLE blocklist_entries (
      id          text PRIMARY KEY,
      number      text NOT NULL,
      account_id  text REFERENCES accounts (id),
      reason      text,
      created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE UNIQUE INDEX blocklist_entries_number_key ON blocklist_entries (number, coalesce(account_id, ''));

    CREATE TABLE messages (
      id                   text PRIMARY KEY,
      account_id           text NOT NULL REFERENCES accounts (id),
      api_key_id           text REFERENCES api_keys (id),
      "to"                 text NOT NULL,
      "from"               text NOT NULL,
      body                 text NOT NULL,
      status               text NOT NULL CHECK (status IN ('pending', 'sent', 'delivered', 'failed', 'undelivered')),
      encoding             text NOT NULL CHECK (encoding IN ('GSM-7', 'UCS-2')),
      segments             integer NOT NULL CHECK (segments >= 0),
      cost                 numeric(18, 4) NOT NULL CHECK (cost >= 0),
      currency             char(3) NOT NULL,
      route_id             integer REFERENCES routes (id),
      provider_message_id  text,
      attempts             integer NOT NULL DEFAULT 0,
      error                jsonb,
      reference            text,
      created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
      sent_at              timestamptz,
      delivered_at         timestamptz,
      failed_at            timestamptz
    );
    CREATE INDEX messages_account_created_idx ON messages (account_id, created_at DESC, id DESC);
    CREATE INDEX messages_account_status_idx ON messages (account_id, status, created_at DESC, id DESC);
    CREATE INDEX messages_account_to_idx ON messages (account_id, "to", created_at DESC, id DESC);
    CREATE INDEX messages_key_created_idx ON messages (api_key_id, created_at);
    CREATE UNIQUE INDEX messages_provider_id_key ON messages (route_id, provider_message_id) WHERE provider_message_id IS NOT NULL;

    -- Per-key request counters (fixed windows, app/rate-limit.ts), shared by every process.
    CREATE TABLE rate_limits (
      key     varchar(255) PRIMARY KEY,
      points  integer NOT NULL DEFAULT 0,
      expire  bigint
    );
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TABLE rate_limits, messages, blocklist_entries, account_routes, routes, senders, api_keys, ledger_entries, accounts;
  `);
}
