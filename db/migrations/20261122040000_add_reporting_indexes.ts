import type { Knex } from 'knex';

// The operator's metrics read recent messages across accounts and ledger totals by kind.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE INDEX messages_created_idx ON messages (created_at);
    CREATE INDEX ledger_entries_kind_idx ON ledger_entries (kind) INCLUDE (amount);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX messages_created_idx, ledger_entries_kind_idx');
}
