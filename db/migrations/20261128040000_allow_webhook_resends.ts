import type { Knex } from 'knex';

// A resend (POST /webhooks/{id}/events/{event_id}/resend) is a second delivery of an event to an
// endpoint, with attempts of its own, so (endpoint, event) no longer names one delivery. Fan-out
// still writes one delivery per event and endpoint: it runs once, in the transaction that
// records the event, and events are themselves unique per message and type. Lookups by event use
// webhook_deliveries_event_idx; by endpoint, the pending index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key');
}

// Back to one delivery per endpoint and event: the resends (every delivery but the first of each
// pair) go, with their attempts.
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TEMPORARY TABLE resent_deliveries ON COMMIT DROP AS
      SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY endpoint_id, event_id ORDER BY id) AS n FROM webhook_deliveries) AS numbered WHERE n > 1;
    DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM resent_deliveries);
    DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM resent_deliveries);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_event_id_key UNIQUE (endpoint_id, event_id);
  `);
}
