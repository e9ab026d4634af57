import type { Knex } from 'knex';

/**
 * The reconciler looks for pending messages by the time they became due: their send_at, or their
 * acceptance when they go at once. By acceptance alone, an account holding 1,000,000 messages
 * scheduled a month ahead put all of them in every pass (a set difference of 1,000,000 ids
 * against as many carried by their live jobs, seconds of the database a minute); by due time,
 * messages not yet due are past the end of the range it reads. The name stays: the statements
 * that must keep out of this index (db/messages.ts, stillIn) say so by its name.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX messages_pending_idx;
    CREATE INDEX messages_pending_idx ON messages ((coalesce(send_at, created_at))) WHERE status = 'pending';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX messages_pending_idx;
    CREATE INDEX messages_pending_idx ON messages (created_at) WHERE status = 'pending';
  `);
}
