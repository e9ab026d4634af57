import type { Knex } from 'knex';

// The daily purge deletes a day's events with their webhook deliveries and attempts. Deleting a
// delivery makes PostgreSQL look for attempts that still reference it, and deleting an event for
// deliveries that do; without these indexes each of those checks read the whole other table, so
// a purge took its day's rows times the table (test/db/event-purge.test.ts purges 70,000).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id)');
  await knex.raw('CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX webhook_deliveries_event_idx');
  await knex.raw('DROP INDEX webhook_attempts_delivery_idx');
}
