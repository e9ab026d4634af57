import type { Knex } from 'knex';

// A key's daily and monthly limits are counted in key_send_counts, so nothing reads messages by
// key any more, yet every write of a message row (accepted, begun, sent, delivered) also wrote
// this index. Without it the send workers cleared a backlog 9 to 10% faster (three alternated
// pairs of `npm run bench -- --only accept-alone --worker-processes 1`). API keys are revoked,
// never deleted, so the foreign key from messages needs no index on this side either.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX messages_key_created_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX messages_key_created_idx ON messages (api_key_id, created_at)');
}
