import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Messages handsets sent to a number. account_id is null when no account holds the number:
    -- such a message is kept for the operator, never dropped. (route_id, provider_message_id)
    -- is the dedupe key: a provider repeating a message stores it once.
    CREATE TABLE inbound_messages (
      id                   text PRIMARY KEY,
      account_id           text REFERENCES accounts (id),
      route_id             integer NOT NULL REFERENCES routes (id),
      provider_message_id  text NOT NULL,
      "from"               text NOT NULL,
      "to"                 text NOT NULL,
      body                 text NOT NULL,
      encoding             text NOT NULL CHECK (encoding IN ('GSM-7', 'UCS-2', 'Latin-1')),
      segments             integer NOT NULL CHECK (segments >= 1),
      complete             boolean NOT NULL,
      keyword              text,
      received_at          timestamptz NOT NULL,
      created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
      UNIQUE (route_id, provider_message_id)
    );
    -- The customer list and its filters (from, to; a time range rides on each), newest first.
    CREATE INDEX inbound_messages_account_created_idx ON inbound_messages (account_id, created_at DESC, id DESC);
    CREATE INDEX inbound_messages_account_from_idx ON inbound_messages (account_id, "from", created_at DESC, id DESC);
    CREATE INDEX inbound_messages_account_to_idx ON inbound_messages (account_id, "to", created_at DESC, id DESC);
    -- The operator's list of every message, and of those no account holds.
    CREATE INDEX inbound_messages_created_idx ON inbound_messages (created_at DESC, id DESC);
    CREATE INDEX inbound_messages_unowned_idx ON inbound_messages (created_at DESC, id DESC) WHERE account_id IS NULL;

    -- A number receives for one account at a time: at most one approved long code or short code
    -- per number, compared without the leading '+' (a long code may be registered either way).
    -- The same expression is the inbound path's lookup of the account that holds a number.
    CREATE UNIQUE INDEX senders_inbound_number_key ON senders (ltrim(sender_id, '+'))
      WHERE status = 'approved' AND type IN ('long_code', 'short_code');
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX senders_inbound_number_key;
    DROP TABLE inbound_messages;
  `);
}
