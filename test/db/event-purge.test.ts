import { expect } from 'chai';
import { purgeOldEvents } from '../../db/events.ts';
import { call } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const RECEIVER = 'http://127.0.0.1:9/hooks';
/** More than PostgreSQL's 65,535 parameters of one statement. */
const OLD_EVENTS = 70_000;

describe('the daily purge of events past retention', function () {
  this.timeout(120_000);

  it('purges a day of 70,000 events with their deliveries and attempts, and keeps the recent ones', async () => {
    const tenant = await createTenant();
    const endpoint = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: RECEIVER } })).body.data.id;
    // Each event delivered once, in one attempt, finished: the webhook workers leave them alone.
    const seed = (prefix: string, count: number, createdAt: Date) =>
      harness.db.raw(
        `WITH e AS (
           INSERT INTO events (id, account_id, type, data, created_at)
           SELECT ? || g, ?, 'webhook.test', '{}', ? FROM generate_series(1, ?) AS g RETURNING id),
         d AS (
           INSERT INTO webhook_deliveries (endpoint_id, event_id, status, attempts, created_at, finished_at)
           SELECT ?, id, 'succeeded', 1, ?, ? FROM e RETURNING id, event_id)
         INSERT INTO webhook_attempts (id, delivery_id, endpoint_id, event_id, attempt, succeeded, status_code, duration_ms, created_at)
         SELECT 'wa_' || event_id, id, ?, event_id, 1, true, 200, 1, ? FROM d`,
        [prefix, tenant.accountId, createdAt, count, endpoint, createdAt, createdAt, endpoint, createdAt],
      );
    await seed('evt_purged_', OLD_EVENTS, new Date(Date.now() - 31 * 86_400_000));
    await seed('evt_kept_', 1, new Date(Date.now() - 29 * 86_400_000));

    expect(await purgeOldEvents(harness.db)).to.be.at.least(OLD_EVENTS);

    const eventsLeft = async () => (await harness.db('events').where({ account_id: tenant.accountId }).pluck('id')).sort();
    const eventsOf = async (table: 'webhook_deliveries' | 'webhook_attempts') =>
      (await harness.db(table).where({ endpoint_id: endpoint }).pluck('event_id')).sort();
    expect(await eventsLeft()).to.deep.equal(['evt_kept_1']);
    expect(await eventsOf('webhook_deliveries')).to.deep.equal(['evt_kept_1']);
    expect(await eventsOf('webhook_attempts')).to.deep.equal(['evt_kept_1']);
  });
});
