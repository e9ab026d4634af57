import { expect } from 'chai';
import { verifySignature } from '../../sdk/webhook-signature.ts';
import { call, expectError } from '../support/client.ts';
import { addRoute, createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset, randomLongCode, simulateInbound } from '../support/inbound.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

describe('POST /admin/routes/{id}/inbound', () => {
  it('stores the message for the account that holds the number, and the account lists it', async () => {
    const tenant = await inboundTenant();
    const from = randomHandset();
    const stored = await simulateInbound(tenant.routeId, { from, to: tenant.number, body: 'Can I move my delivery to Friday?' });
    expect(stored).to.deep.include({
      object: 'inbound_message',
      account_id: tenant.accountId,
      from,
      to: tenant.number,
      body: 'Can I move my delivery to Friday?',
      encoding: 'GSM-7',
      segments: 1,
      complete: true,
      keyword: null,
      route_id: tenant.routeId,
    });
    expect(stored.id).to.match(/^inb_[0-9A-Za-z]{24}$/);

    const listed = await call('GET', '/inbound-messages', { auth: tenant.key });
    expect(listed.status).to.equal(200);
    const { account_id, ...view } = stored;
    expect(listed.body.data).to.deep.equal([view]);
    expect(listed.body.pagination).to.deep.equal({ page: 1, limit: 50, total: 1, pages: 1, has_more: false });
  });

  it('finds the account whose long code was registered without its +', async () => {
    const tenant = await inboundTenant();
    const bare = randomLongCode().slice(1);
    const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: bare, type: 'long_code' } });
    await call('POST', `/admin/senders/${created.body.data.id}/approve`, { auth: 'admin' });
    expect(await simulateInbound(tenant.routeId, { from: randomHandset(), to: `+${bare}`, body: 'Hi' })).to.include({ account_id: tenant.accountId });
  });

  it('reports the encoding and parts the body takes as an SMS', async () => {
    const tenant = await inboundTenant({ type: 'short_code' });
    const stored = await simulateInbound(tenant.routeId, { from: randomHandset(), to: tenant.number, body: 'Grüße aus Köln 📦 '.repeat(5) });
    expect(stored).to.include({ encoding: 'UCS-2', segments: 2, account_id: tenant.accountId });
  });

  it('keeps a message to a number no account holds for the operator, with no event', async () => {
    const tenant = await inboundTenant();
    const to = randomLongCode();
    const stored = await simulateInbound(tenant.routeId, { from: randomHandset(), to, body: 'STOP' });
    expect(stored).to.include({ account_id: null, keyword: null, to });
    expect((await call('GET', '/inbound-messages', { auth: tenant.key })).body.data).to.deep.equal([]);
    expect(await harness.db('events').where('data', '@>', JSON.stringify({ id: stored.id }))).to.have.length(0);
  });

  it('answers 400 naming id for a route of another provider, and stores nothing', async () => {
    const tenant = await createTenant();
    const routeId = await addRoute(tenant.accountId, 0, { provider: 'http', config: { url: 'http://127.0.0.1:9/sms' } });
    expectError(
      await call('POST', `/admin/routes/${routeId}/inbound`, { auth: 'admin', body: { from: randomHandset(), to: randomLongCode(), body: 'Hi' } }),
      400,
      'parameter_invalid',
      'id',
    );
    expect(await harness.db('inbound_messages').where({ route_id: routeId })).to.have.length(0);
  });

  it('answers 404 for an unknown route', async () => {
    expectError(
      await call('POST', '/admin/routes/999999/inbound', { auth: 'admin', body: { from: randomHandset(), to: randomLongCode(), body: 'Hi' } }),
      404,
      'resource_not_found',
    );
  });

  for (const [what, body, code, param] of [
    ['a from that is not E.164', { from: '07400123456', to: '+12127000100', body: 'Hi' }, 'parameter_invalid', 'from'],
    ['a missing to', { from: '+12127000101', body: 'Hi' }, 'parameter_missing', 'to'],
    ['an empty body', { from: '+12127000101', to: '+12127000100', body: '' }, 'parameter_invalid', 'body'],
    ['an unknown field', { from: '+12127000101', to: '+12127000100', body: 'Hi', id: 'x' }, 'parameter_unknown', 'id'],
  ] as const) {
    it(`answers 400 ${code} for ${what}`, async () => {
      const tenant = await inboundTenant();
      expectError(await call('POST', `/admin/routes/${tenant.routeId}/inbound`, { auth: 'admin', body }), 400, code, param);
      expect(await harness.db('inbound_messages').where({ route_id: tenant.routeId })).to.have.length(0);
    });
  }
});

describe('GET /inbound-messages', () => {
  it('lists newest first, filtered by from, to and a time window, paged', async () => {
    const tenant = await inboundTenant();
    const second = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: randomLongCode(), type: 'long_code' } });
    await call('POST', `/admin/senders/${second.body.data.id}/approve`, { auth: 'admin' });
    const otherNumber = second.body.data.sender_id;
    const alice = randomHandset();
    const bob = randomHandset();
    const first = await simulateInbound(tenant.routeId, { from: alice, to: tenant.number, body: 'one' });
    const middle = await simulateInbound(tenant.routeId, { from: bob, to: tenant.number, body: 'two' });
    const last = await simulateInbound(tenant.routeId, { from: alice, to: otherNumber, body: 'three' });
    const ids = async (query: string) => (await call('GET', `/inbound-messages${query}`, { auth: tenant.key })).body.data.map((m: { id: string }) => m.id);

    expect(await ids('')).to.deep.equal([last.id, middle.id, first.id]);
    expect(await ids(`?from=${encodeURIComponent(alice)}`)).to.deep.equal([last.id, first.id]);
    expect(await ids(`?to=${encodeURIComponent(tenant.number)}`)).to.deep.equal([middle.id, first.id]);
    expect(await ids(`?from=${encodeURIComponent(alice)}&to=${encodeURIComponent(otherNumber)}`)).to.deep.equal([last.id]);

    // Stored with microseconds: just after the first (to the millisecond) and at the last's millisecond, which is not after it.
    const created = new Map(
      (await harness.db('inbound_messages').whereIn('id', [first.id, last.id]).select('id', 'created_at')).map((row) => [row.id, row.created_at.getTime()]),
    );
    const window = `?created_after=${new Date(created.get(first.id)! + 1).toISOString()}&created_before=${new Date(created.get(last.id)).toISOString()}`;
    expect(await ids(window)).to.deep.equal([middle.id]);

    const page = await call('GET', '/inbound-messages?limit=2&page=2', { auth: tenant.key });
    expect(page.body.data.map((m: { id: string }) => m.id)).to.deep.equal([first.id]);
    expect(page.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, pages: 2, has_more: false });
  });

  it("shows only the calling account's messages", async () => {
    const tenant = await inboundTenant();
    const other = await inboundTenant();
    await simulateInbound(other.routeId, { from: randomHandset(), to: other.number, body: 'for the other account' });
    expect((await call('GET', '/inbound-messages', { auth: tenant.key })).body.data).to.deep.equal([]);
  });

  for (const [query, param] of [
    ['from=07400123456', 'from'],
    ['to=%2B12a', 'to'],
    ['created_after=yesterday', 'created_after'],
    ['limit=101', 'limit'],
  ]) {
    it(`answers 400 parameter_invalid naming ${param} for ?${query}`, async () => {
      const tenant = await createTenant();
      expectError(await call('GET', `/inbound-messages?${query}`, { auth: tenant.key }), 400, 'parameter_invalid', param);
    });
  }
});

describe('GET /inbound-messages/{id}', () => {
  it('answers the message', async () => {
    const tenant = await inboundTenant();
    const { account_id, ...stored } = await simulateInbound(tenant.routeId, { from: randomHandset(), to: tenant.number, body: 'Hello' });
    const response = await call('GET', `/inbound-messages/${stored.id}`, { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.equal(stored);
  });

  it('answers 400 naming id for an id that does not decode to text', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/inbound-messages/%E2%82', { auth: tenant.key }), 400, 'parameter_invalid', 'id');
  });

  it('answers 404 for an unknown id', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/inbound-messages/inb_000000000000000000000000', { auth: tenant.key }), 404, 'resource_not_found', 'id');
  });
});

describe('message.received', () => {
  let receiver: WebhookReceiver;
  let bystander: WebhookReceiver;

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    bystander = await WebhookReceiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
    await bystander.stop();
  });

  it('is delivered once, signed, to an endpoint subscribed to it, listed by GET /events, and not to one subscribed to other types', async () => {
    const tenant = await inboundTenant();
    const subscribed = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, events: ['message.received'] } });
    const unsubscribed = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: bystander.url, events: ['message.delivered'] } });
    const { account_id, ...stored } = await simulateInbound(tenant.routeId, { from: randomHandset(), to: tenant.number, body: 'Is it ready?' });

    await receiver.waitFor((received) => received.length >= 1);
    const [delivery] = receiver.received;
    verifySignature(delivery.rawBody, delivery.headers['dispatch-signature'] as string, subscribed.body.data.signing_secret);
    expect(delivery.event).to.deep.include({ object: 'event', type: 'message.received', data: stored });

    const listed = await call('GET', '/events?type=message.received', { auth: tenant.key });
    expect(listed.body.data).to.deep.equal([delivery.event]);
    // Deliveries are written with their event: none for the endpoint that did not subscribe.
    expect(await harness.db('webhook_deliveries').where({ endpoint_id: unsubscribed.body.data.id })).to.have.length(0);
    expect(await harness.db('webhook_deliveries').where({ endpoint_id: subscribed.body.data.id })).to.have.length(1);
  });
});
