import type { Knex } from 'knex';

// Smart encoding (domain/smart-encoding.ts): an account's default for the sends that do not say,
// and on each message whether it was sent with its look-alikes replaced. A constant default
// makes both columns a change of the catalogue alone: no row is rewritten, and the messages
// stored before them read false, which they were.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE accounts ADD COLUMN smart_encoding boolean NOT NULL DEFAULT false;
    COMMENT ON COLUMN accounts.smart_encoding IS 'whether sends that do not say smart_encoding replace GSM-7 look-alikes';
    ALTER TABLE messages ADD COLUMN smart_encoded boolean NOT NULL DEFAULT false;
    COMMENT ON COLUMN messages.smart_encoded IS 'the body is the one given with its GSM-7 look-alikes replaced';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP COLUMN smart_encoded;
    ALTER TABLE accounts DROP COLUMN smart_encoding;
  `);
}
