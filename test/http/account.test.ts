import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, storeMessages } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('GET /account', () => {
  it("answers the caller's account", async () => {
    const tenant = await createTenant({ balance: 12.5 });
    const response = await call('GET', '/account', { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.success).to.equal(true);
    expect(response.body.meta.api_version).to.equal('v1');
    expect(response.body.data).to.include({
      id: tenant.accountId,
      object: 'account',
      name: 'Test tenant',
      status: 'active',
      balance: 12.5,
      currency: 'USD',
      kyc_verified: false,
    });
  });

  it('answers 401 without a key', async () => {
    expectError(await call('GET', '/account'), 401, 'unauthorized');
  });
});

describe('GET /balance', () => {
  it('answers the balance with its currency and time', async () => {
    const tenant = await createTenant({ balance: 3.25, currency: 'EUR' });
    const before = Date.now();
    const response = await call('GET', '/balance', { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ object: 'balance', balance: 3.25, currency: 'EUR' });
    expect(Date.parse(response.body.data.as_of)).to.be.at.least(before - 1000);
  });
});

describe('GET /usage', () => {
  it('totals messages and cost by status over the month by default', async () => {
    harness.clock.set(new Date('2031-05-20T12:00:00.000Z'));
    const tenant = await createTenant();
    const thisMonth = new Date('2031-05-02T08:00:00.000Z');
    await storeMessages(tenant, [
      { status: 'delivered', cost: '0.0075', created_at: thisMonth },
      { status: 'delivered', cost: '0.0150', created_at: thisMonth },
      { status: 'failed', cost: '0.0000', created_at: thisMonth },
      { status: 'pending', cost: '0.0075', created_at: thisMonth },
      { status: 'delivered', cost: '0.0500', created_at: new Date('2031-04-30T23:59:59.000Z') },
    ]);
    const response = await call('GET', '/usage', { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.include({ object: 'usage', period: 'month', currency: 'USD', totals: { messages: 4, cost: 0.03 } });
    expect(response.body.data.by_status).to.deep.equal({ pending: 1, sent: 0, delivered: 2, failed: 1, undelivered: 0 });
    expect(response.body.data.starts_at).to.equal('2031-05-01T00:00:00.000Z');
  });

  it('counts only today for period=day, and everything for period=all', async () => {
    harness.clock.set(new Date('2031-05-20T00:00:01.000Z'));
    const tenant = await createTenant();
    await harness
      .db('accounts')
      .where({ id: tenant.accountId })
      .update({ created_at: new Date(Date.UTC(2020, 0, 1)) });
    await storeMessages(tenant, [
      { status: 'sent', cost: '0.0100', created_at: new Date('2031-05-20T00:00:00.000Z') },
      { status: 'delivered', cost: '0.0200', created_at: new Date('2031-05-19T23:59:59.999Z') },
    ]);
    const day = await call('GET', '/usage?period=day', { auth: tenant.key });
    expect(day.body.data.totals).to.deep.equal({ messages: 1, cost: 0.01 });
    expect(day.body.data.by_status.sent).to.equal(1);
    expect(day.body.data.starts_at).to.equal('2031-05-20T00:00:00.000Z');
    const all = await call('GET', '/usage?period=all', { auth: tenant.key });
    expect(all.body.data.totals).to.deep.equal({ messages: 2, cost: 0.03 });
    expect(all.body.data.starts_at).to.equal('2020-01-01T00:00:00.000Z');
  });

  it('answers zeros for an account with no messages', async () => {
    const tenant = await createTenant();
    const response = await call('GET', '/usage?period=day', { auth: tenant.key });
    expect(response.body.data.totals).to.deep.equal({ messages: 0, cost: 0 });
  });

  it('answers 400 naming the parameter for an unknown period', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/usage?period=week', { auth: tenant.key }), 400, 'parameter_invalid', 'period');
  });
});
