import type { Knex } from 'knex';

// Quiet hours: an account's default send window, and the window a message was sent within (with
// the zones it held in and whether it moved the send time), both as JSON objects.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE accounts ADD COLUMN send_window jsonb;
    ALTER TABLE messages ADD COLUMN send_window jsonb;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP COLUMN send_window;
    ALTER TABLE accounts DROP COLUMN send_window;
  `);
}
