import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, eventually, sendingTenant, storeMessages } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';

const RECEIVER = 'http://127.0.0.1:9/hooks';

describe('POST /webhooks/create', () => {
  it('creates an endpoint subscribed to every event by default, showing its signing secret once', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: RECEIVER, description: 'Orders' } });
    expect(response.status).to.equal(201);
    const endpoint = response.body.data;
    expect(endpoint).to.deep.include({
      object: 'webhook_endpoint',
      url: RECEIVER,
      description: 'Orders',
      events: ['*'],
      is_active: true,
      failure_count: 0,
      last_success_at: null,
      last_failure_at: null,
      disabled_at: null,
    });
    expect(endpoint.id).to.match(/^whe_[0-9A-Za-z]{24}$/);
    expect(endpoint.signing_secret).to.match(/^whsec_[0-9A-Za-z]{43}$/);
    const fetched = await call('GET', `/webhooks/${endpoint.id}`, { auth: tenant.key });
    expect(fetched.body.data).to.not.have.property('signing_secret');
    const listed = await call('GET', '/webhooks', { auth: tenant.key });
    expect(JSON.stringify(listed.body)).to.not.include(endpoint.signing_secret);
  });

  it('keeps the event types asked for', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: RECEIVER, events: ['message.delivered', 'message.failed'] } });
    expect(response.body.data.events).to.deep.equal(['message.delivered', 'message.failed']);
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a missing url', {}, 'parameter_missing', 'url'],
    ['a relative url', { url: '/hooks' }, 'parameter_invalid', 'url'],
    ['an ftp url', { url: 'ftp://example.com/hooks' }, 'parameter_invalid', 'url'],
    ['an unknown event type', { url: RECEIVER, events: ['message.read'] }, 'parameter_invalid', 'events[0]'],
    ['no event types', { url: RECEIVER, events: [] }, 'parameter_invalid', 'events'],
    ['an unknown field', { url: RECEIVER, secret: 'mine' }, 'parameter_unknown', 'secret'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}`, async () => {
      const tenant = await createTenant();
      expectError(await call('POST', '/webhooks/create', { auth: tenant.key, body }), 400, code, param);
    });
  }

  it('refuses URLs on private or loopback addresses unless the operator allows them', async function () {
    // It starts a second Dispatch (pg-boss, workers), which may take seconds on a busy machine.
    this.timeout(60_000);
    const strict = await startInstance(harness.database.url, { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    try {
      const tenant = await createTenant();
      for (const url of [
        'http://127.0.0.1/hooks',
        'http://2130706433/hooks',
        'http://[::ffff:127.0.0.1]/hooks',
        'http://10.0.0.8/hooks',
        'http://169.254.169.254/latest',
        'http://localhost/hooks',
      ]) {
        const response = await call('POST', '/webhooks/create', { auth: tenant.key, baseUrl: strict.baseUrl, body: { url } });
        expectError(response, 400, 'parameter_invalid', 'url');
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('GET /webhooks, GET and DELETE /webhooks/{id}', () => {
  it("lists the account's endpoints newest first and forgets a deleted one", async () => {
    const tenant = await createTenant();
    const first = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: `${RECEIVER}/1` } })).body.data;
    const second = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: `${RECEIVER}/2` } })).body.data;
    const listed = await call('GET', '/webhooks', { auth: tenant.key });
    expect(listed.status).to.equal(200);
    expect(listed.body.data.object).to.equal('list');
    expect(listed.body.data.data.map((e: { id: string }) => e.id)).to.deep.equal([second.id, first.id]);

    const removed = await call('DELETE', `/webhooks/${first.id}`, { auth: tenant.key });
    expect(removed.body.data).to.deep.equal({ id: first.id, object: 'webhook_endpoint', deleted: true });
    expectError(await call('GET', `/webhooks/${first.id}`, { auth: tenant.key }), 404, 'resource_not_found');
    expectError(await call('DELETE', `/webhooks/${first.id}`, { auth: tenant.key }), 404, 'resource_not_found');
    expect((await call('GET', '/webhooks', { auth: tenant.key })).body.data.data.map((e: { id: string }) => e.id)).to.deep.equal([second.id]);
  });

  it("answers another account's endpoint with 404", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const endpoint = (await call('POST', '/webhooks/create', { auth: owner.key, body: { url: RECEIVER } })).body.data;
    expectError(await call('GET', `/webhooks/${endpoint.id}`, { auth: stranger.key }), 404, 'resource_not_found');
    expectError(await call('DELETE', `/webhooks/${endpoint.id}`, { auth: stranger.key }), 404, 'resource_not_found');
    expect((await call('GET', '/webhooks', { auth: stranger.key })).body.data.data).to.deep.equal([]);
  });
});

describe('GET /events', () => {
  it("lists the account's events newest first, filtered by type", async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const [failedId] = await storeMessages(tenant, [{ status: 'pending' }]);
    const sent = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: ['+14155550123', '+10005550100'], from: 'Dispatch', body: 'Hi' },
    });
    expect(sent.status).to.equal(201);
    // One recipient fails in the request, the other once the send job has run.
    const events = await eventually(
      () => call('GET', '/events?type=message.failed', { auth: tenant.key }),
      (listed) => listed.body.data.length >= 2,
      { what: 'two message.failed events' },
    );
    expect(events.status).to.equal(200);
    expect(events.body.data.map((e: { type: string }) => e.type)).to.deep.equal(['message.failed', 'message.failed']);
    expect(events.body.data[0].id).to.match(/^evt_/);
    expect(events.body.pagination).to.include({ page: 1, total: 2 });
    const times = events.body.data.map((e: { created_at: string }) => e.created_at);
    expect(times).to.deep.equal([...times].sort().reverse());
    expect(failedId).to.be.a('string');
    expect((await call('GET', '/events?type=message.sent', { auth: tenant.key })).body.data).to.deep.equal([]);
  });

  it('answers 400 for an unknown type and shows nothing of other accounts', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/events?type=message.opened', { auth: tenant.key }), 400, 'parameter_invalid', 'type');
    expect((await call('GET', '/events', { auth: tenant.key })).body.data).to.deep.equal([]);
  });
});

describe('POST /admin/webhooks/{id}/enable and GET /admin/webhooks/{id}/attempts', () => {
  it('answers 404 for unknown endpoints and 400 for bad paging', async () => {
    expectError(await call('POST', '/admin/webhooks/whe_000000000000000000000000/enable', { auth: 'admin' }), 404, 'resource_not_found');
    expectError(await call('GET', '/admin/webhooks/whe_000000000000000000000000/attempts', { auth: 'admin' }), 404, 'resource_not_found');
    const tenant = await createTenant();
    const endpoint = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: RECEIVER } })).body.data;
    expectError(await call('GET', `/admin/webhooks/${endpoint.id}/attempts?limit=0`, { auth: 'admin' }), 400, 'parameter_invalid', 'limit');
  });
});

describe('event retention', () => {
  it('lists events of the last 30 days only, and the daily purge deletes older ones with their deliveries', async () => {
    const { purgeOldEvents } = await import('../../db/events.ts');
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: RECEIVER } });
    await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients: ['+10005550100', '+10005550101'], from: 'Dispatch', body: 'Hi' } });
    const [old] = await harness.db('events').where({ account_id: tenant.accountId }).orderBy('id').limit(1);
    await harness
      .db('events')
      .where({ id: old.id })
      .update({ created_at: new Date(Date.now() - 31 * 86_400_000) });
    const listed = await call('GET', '/events', { auth: tenant.key });
    expect(listed.body.data.map((e: { id: string }) => e.id)).to.not.include(old.id);
    expect(listed.body.pagination.total).to.equal(1);
    expect(await purgeOldEvents(harness.db)).to.be.at.least(1);
    expect(await harness.db('events').where({ id: old.id })).to.have.length(0);
    expect(await harness.db('webhook_deliveries').where({ event_id: old.id })).to.have.length(0);
    expect(await harness.db('events').where({ account_id: tenant.accountId })).to.have.length(1);
  });
});
