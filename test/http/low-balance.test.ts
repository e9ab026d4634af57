import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, createTenant, eventually, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { waitUntil } from '../support/webhook-state.ts';

const lowEventsOf = (accountId: string) => harness.db('events').where({ account_id: accountId, type: 'balance.low' }).orderBy('created_at');

describe('PATCH /account', () => {
  it('sets the low-balance threshold, shows it on the account, and turns it off with null', async () => {
    const tenant = await createTenant({ balance: 10 });
    expect((await call('GET', '/account', { auth: tenant.key })).body.data.low_balance_threshold).to.equal(null);

    const set = await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: 2.5 } });
    expect(set.status).to.equal(200);
    expect(set.body.data).to.include({ id: tenant.accountId, object: 'account', balance: 10, low_balance_threshold: 2.5 });
    expect((await call('GET', '/account', { auth: tenant.key })).body.data.low_balance_threshold).to.equal(2.5);
    expect((await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.low_balance_threshold).to.equal(2.5);

    const off = await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: null } });
    expect(off.status).to.equal(200);
    expect(off.body.data.low_balance_threshold).to.equal(null);
  });

  for (const [what, body, param] of [
    ['a negative threshold', { low_balance_threshold: -1 }, 'low_balance_threshold'],
    ['five decimal places', { low_balance_threshold: 1.00001 }, 'low_balance_threshold'],
    ['a string', { low_balance_threshold: '5' }, 'low_balance_threshold'],
    ['an unknown field', { balance: 100 }, 'balance'],
  ] as const) {
    it(`answers 400 naming ${param} to ${what}, and changes nothing`, async () => {
      const tenant = await createTenant({ balance: 10 });
      await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: 1 } });
      const response = await call('PATCH', '/account', { auth: tenant.key, body });
      expect(response.status).to.equal(400);
      expect(response.body.error.param).to.equal(param);
      const account = (await call('GET', '/account', { auth: tenant.key })).body.data;
      expect(account).to.include({ balance: 10, low_balance_threshold: 1 });
    });
  }

  it('answers 400 to an empty body', async () => {
    const tenant = await createTenant();
    expect((await call('PATCH', '/account', { auth: tenant.key, body: {} })).status).to.equal(400);
  });

  it('answers 403 to a key without webhooks:write', async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Reader', permissions: ['account:read', 'balance:read'] });
    const response = await call('PATCH', '/account', { auth: key.plain_key, body: { low_balance_threshold: 1 } });
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.equal({ required_scope: 'webhooks:write' });
  });
});

describe('the balance.low event', function () {
  this.timeout(30_000);
  let receiver: WebhookReceiver | undefined;

  afterEach(async () => {
    await receiver?.stop();
    receiver = undefined;
  });

  /** A tenant whose every message costs 0.20, warned below `threshold`, with an endpoint subscribed to balance.low only. */
  async function warnedTenant(balance: number, threshold: number | null): Promise<Tenant> {
    const tenant = await sendingTenant({ balance, routes: [{ price: 0.2, config: { outcome: 'delivered', dlr_delay_ms: 20 } }] });
    if (threshold !== null) expect((await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: threshold } })).status).to.equal(200);
    receiver = await WebhookReceiver.start();
    const endpoint = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, events: ['balance.low'] } });
    expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
    return tenant;
  }

  const send = async (tenant: Tenant) => {
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+12127000042', from: 'Dispatch', body: 'Hi' } });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
  };

  it('is emitted once when a send crosses the threshold, not for sends below it, and again after a credit re-arms it', async () => {
    const tenant = await warnedTenant(1, 0.5);
    await send(tenant); // 0.80
    await send(tenant); // 0.60
    expect(await lowEventsOf(tenant.accountId)).to.have.length(0);
    await send(tenant); // 0.40: crosses
    await send(tenant); // 0.20: already below
    expect(await lowEventsOf(tenant.accountId)).to.have.length(1);

    expect((await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 1 } })).status).to.equal(200); // 1.20
    await send(tenant); // 1.00
    await send(tenant); // 0.80
    await send(tenant); // 0.60
    await send(tenant); // 0.40: crosses again
    const events = await lowEventsOf(tenant.accountId);
    expect(events.map((event) => event.data)).to.deep.equal([
      { account_id: tenant.accountId, balance: 0.4, threshold: 0.5, currency: 'USD' },
      { account_id: tenant.accountId, balance: 0.4, threshold: 0.5, currency: 'USD' },
    ]);

    const delivered = receiver!;
    await waitUntil('both warnings delivered', () => delivered.received.length >= 2);
    expect(delivered.received.map((delivery) => delivery.event.id)).to.deep.equal(events.map((event) => event.id));
    expect(delivered.received.map((delivery) => delivery.event)).to.deep.equal(
      (await call('GET', '/events?type=balance.low', { auth: tenant.key })).body.data.reverse(),
    );
    expect(delivered.received.every((delivery) => delivery.event.type === 'balance.low')).to.equal(true);
  });

  it('is emitted once by a bulk send whose charges cross the threshold', async () => {
    const tenant = await warnedTenant(1, 0.5);
    const response = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: ['+12127000001', '+12127000002', '+12127000003', '+12127000004'], from: 'Dispatch', body: 'Hi' },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    const events = await lowEventsOf(tenant.accountId);
    expect(events.map((event) => event.data)).to.deep.equal([{ account_id: tenant.accountId, balance: 0.2, threshold: 0.5, currency: 'USD' }]);
    const delivered = receiver!;
    await waitUntil('the warning delivered', () => delivered.received.length >= 1);
    expect(delivered.received.map((delivery) => delivery.event.id)).to.deep.equal([events[0].id]);
  });

  it('is emitted once by concurrent single sends that cross it together', async () => {
    const tenant = await warnedTenant(2, 1);
    await Promise.all(Array.from({ length: 8 }, () => send(tenant))); // 2.00 to 0.40
    expect((await call('GET', '/balance', { auth: tenant.key })).body.data.balance).to.equal(0.4);
    expect(await lowEventsOf(tenant.accountId)).to.have.length(1);
  });

  it('is emitted by the charge of a failover to a pricier route when that charge crosses it', async () => {
    const tenant = await sendingTenant({
      balance: 1,
      routes: [
        { price: 0.1, config: { outcome: 'unavailable' } },
        { price: 0.3, config: { outcome: 'delivered', dlr_delay_ms: 10 } },
      ],
    });
    expect((await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: 0.8 } })).status).to.equal(200);
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+12127000042', from: 'Dispatch', body: 'Hi' } });
    expect(sent.status).to.equal(201);
    // Accepted at 0.10 (0.90 left, above the threshold), then 0.20 more for the pricier route: 0.70.
    await eventually(
      () => lowEventsOf(tenant.accountId),
      (events) => events.length === 1,
      { what: 'the failover charge to warn' },
    );
    await eventually(
      async () => (await call('GET', `/messages/${sent.body.data.id}`, { auth: tenant.key })).body.data.status,
      (status) => status === 'delivered',
    );
    expect((await lowEventsOf(tenant.accountId)).map((event) => event.data)).to.deep.equal([
      { account_id: tenant.accountId, balance: 0.7, threshold: 0.8, currency: 'USD' },
    ]);
  });

  it('is never emitted without a threshold, nor when the threshold is set above the balance', async () => {
    const tenant = await warnedTenant(1, null);
    await send(tenant);
    await send(tenant);
    expect((await call('PATCH', '/account', { auth: tenant.key, body: { low_balance_threshold: 5 } })).status).to.equal(200);
    await send(tenant);
    // Every message settled, so any event its changes caused is written.
    await eventually(
      () => harness.db('messages').where({ account_id: tenant.accountId }).whereIn('status', ['pending', 'sent']).count({ n: '*' }),
      ([{ n }]) => Number(n) === 0,
    );
    expect(await lowEventsOf(tenant.accountId)).to.have.length(0);
    expect((await call('GET', '/events?type=balance.low', { auth: tenant.key })).body.data).to.deep.equal([]);
  });
});
