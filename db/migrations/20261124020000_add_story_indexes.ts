import type { Knex } from 'knex';

// A message's story (GET /admin/messages/{id}/story) reads its ledger rows and the delivery
// attempts of its events; without these, each read would scan the whole table.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX ledger_entries_message_idx ON ledger_entries (message_id) WHERE message_id IS NOT NULL;
    CREATE INDEX webhook_attempts_event_idx ON webhook_attempts (event_id);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX ledger_entries_message_idx, webhook_attempts_event_idx');
}
