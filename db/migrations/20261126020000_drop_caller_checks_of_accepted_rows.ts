import type { Knex } from 'knex';

// Every message and ledger row an acceptance writes checked, row by row, that its account and its
// API key exist: a bulk send of 1,000 made 3,000 such checks, each a key-share lock on the one
// account row (or the key's). `auto_explain` of a bulk of 1,000 (2026-11-26): 5 to 7 ms for each
// of the three keys, 18 ms of the 55 to 65 ms that its two writing statements took. Both ids are
// the authenticated caller's, read before the transaction, and neither accounts nor API keys are
// ever deleted (a key is revoked, an account suspended), so these checks could only ever pass.
// The route a send names keeps its key: that id comes from the request.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP CONSTRAINT messages_account_id_fkey;
    ALTER TABLE messages DROP CONSTRAINT messages_api_key_id_fkey;
    ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_account_id_fkey;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
    ALTER TABLE messages ADD CONSTRAINT messages_api_key_id_fkey FOREIGN KEY (api_key_id) REFERENCES api_keys (id);
    ALTER TABLE messages ADD CONSTRAINT messages_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
  `);
}
