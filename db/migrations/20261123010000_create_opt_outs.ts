import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- Who may no longer be sent to by an account. The primary key is the send path's lookup
    -- (one index probe per recipient, however many opt-outs an account holds); id is internal:
    -- a stable order for pages and a witness of the order in which opt-outs committed.
    CREATE TABLE opt_outs (
      id          bigserial NOT NULL UNIQUE,
      account_id  text NOT NULL REFERENCES accounts (id),
      number      text NOT NULL,
      source      text NOT NULL CHECK (source IN ('keyword', 'api', 'operator')),
      reason      text,
      keyword     text,
      created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (account_id, number)
    );
    CREATE INDEX opt_outs_account_created_idx ON opt_outs (account_id, created_at DESC, id DESC);
    CREATE INDEX opt_outs_created_idx ON opt_outs (created_at DESC, id DESC);
    CREATE INDEX opt_outs_number_idx ON opt_outs (number);

    -- Every opt-out and opt-in, with where it came from and when: the record a regulator asks for.
    CREATE TABLE opt_out_changes (
      id          bigserial PRIMARY KEY,
      account_id  text NOT NULL REFERENCES accounts (id),
      number      text NOT NULL,
      change      text NOT NULL CHECK (change IN ('opt_out', 'opt_in')),
      source      text NOT NULL CHECK (source IN ('keyword', 'api', 'operator')),
      reason      text,
      keyword     text,
      created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX opt_out_changes_number_idx ON opt_out_changes (account_id, number, id);

    -- An account's own keywords (added to the defaults) and texts; a null text means the default in code.
    CREATE TABLE keyword_settings (
      account_id         text PRIMARY KEY REFERENCES accounts (id),
      opt_out_keywords   text[] NOT NULL DEFAULT '{}',
      opt_in_keywords    text[] NOT NULL DEFAULT '{}',
      help_keywords      text[] NOT NULL DEFAULT '{}',
      opt_out_reply      text,
      opt_in_reply       text,
      help_reply         text,
      updated_at         timestamptz NOT NULL DEFAULT clock_timestamp()
    );

    -- Events about something other than an outbound message (an opt-out, an opt-in, an inbound
    -- message) carry no message_id. Every type of issue 10 is allowed here at once, so that the
    -- migrations adding them do not each have to rewrite this check.
    ALTER TABLE events ALTER COLUMN message_id DROP NOT NULL;
    ALTER TABLE events DROP CONSTRAINT events_type_check;
    ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN (
      'message.sent', 'message.delivered', 'message.failed', 'message.received', 'recipient.opted_out', 'recipient.opted_in'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TEMPORARY TABLE later_events ON COMMIT DROP AS
      SELECT id FROM events WHERE message_id IS NULL OR type NOT IN ('message.sent', 'message.delivered', 'message.failed');
    DELETE FROM webhook_attempts WHERE event_id IN (SELECT id FROM later_events);
    DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM later_events);
    DELETE FROM events WHERE id IN (SELECT id FROM later_events);
    ALTER TABLE events DROP CONSTRAINT events_type_check;
    ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN ('message.sent', 'message.delivered', 'message.failed'));
    ALTER TABLE events ALTER COLUMN message_id SET NOT NULL;
    DROP TABLE keyword_settings, opt_out_changes, opt_outs;
  `);
}
