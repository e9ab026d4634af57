import type { Knex } from 'knex';

// A message may wait for its send time (send_at), may be worth sending only for a while
// (validity_period, seconds), and a bulk's messages share its id so that they can be canceled
// together. The indexes serve the account's scheduled list and a bulk's cancel: both partial,
// so that a message sent at once adds no index entry for them.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN send_at timestamptz, ADD COLUMN validity_period integer, ADD COLUMN bulk_id text;
    CREATE INDEX messages_scheduled ON messages (account_id, send_at) WHERE send_at IS NOT NULL;
    CREATE INDEX messages_of_bulk ON messages (bulk_id) WHERE bulk_id IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX messages_of_bulk;
    DROP INDEX messages_scheduled;
    ALTER TABLE messages DROP COLUMN bulk_id, DROP COLUMN validity_period, DROP COLUMN send_at;
  `);
}
