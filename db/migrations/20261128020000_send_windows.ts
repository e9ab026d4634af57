import type { Knex } from 'knex';

// Quiet hours: the window a message was sent within, with the zones it held in and whether it
// moved the send time.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages ADD COLUMN send_window jsonb;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE messages DROP COLUMN send_window;
  `);
}
