import type { Knex } from 'knex';

// Secret rotation keeps the replaced secret, and until when deliveries are also signed with it,
// so that receivers can switch secrets without a window in which they reject deliveries.
// `webhook.test` events are the ones a customer asks for to try an endpoint (POST /webhooks/{id}/test).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE webhook_endpoints
      ADD COLUMN previous_signing_secret text,
      ADD COLUMN previous_secret_expires_at timestamptz,
      ADD CONSTRAINT webhook_endpoints_previous_secret_check CHECK ((previous_signing_secret IS NULL) = (previous_secret_expires_at IS NULL));
    ALTER TABLE events DROP CONSTRAINT events_type_check;
    ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN (
      'message.sent', 'message.delivered', 'message.failed', 'message.received', 'recipient.opted_out', 'recipient.opted_in', 'webhook.test'));
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TEMPORARY TABLE test_events ON COMMIT DROP AS SELECT id FROM events WHERE type = 'webhook.test';
    DELETE FROM webhook_attempts WHERE event_id IN (SELECT id FROM test_events);
    DELETE FROM webhook_deliveries WHERE event_id IN (SELECT id FROM test_events);
    DELETE FROM events WHERE id IN (SELECT id FROM test_events);
    ALTER TABLE events DROP CONSTRAINT events_type_check;
    ALTER TABLE events ADD CONSTRAINT events_type_check CHECK (type IN (
      'message.sent', 'message.delivered', 'message.failed', 'message.received', 'recipient.opted_out', 'recipient.opted_in'));
    ALTER TABLE webhook_endpoints DROP COLUMN previous_signing_secret, DROP COLUMN previous_secret_expires_at;
  `);
}
