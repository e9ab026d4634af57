import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset, randomLongCode, randomShortCode, simulateInbound } from '../support/inbound.ts';

async function registered(tenant: Tenant, senderId: string, type: 'long_code' | 'short_code'): Promise<string> {
  const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: senderId, type } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body.data.id;
}

describe('POST /admin/senders/{id}/approve for an inbound number', () => {
  for (const [type, number, again] of [
    ['long_code', randomLongCode(), (n: string) => n],
    ['long_code written without its +', randomLongCode(), (n: string) => n.slice(1)],
    ['short_code', randomShortCode(), (n: string) => n],
  ] as const) {
    it(`answers 409 when another account holds the ${type}, and leaves the second sender pending`, async () => {
      const kind = type.startsWith('long_code') ? 'long_code' : 'short_code';
      const first = await registered(await createTenant(), number, kind);
      expect((await call('POST', `/admin/senders/${first}/approve`, { auth: 'admin' })).status).to.equal(200);

      const second = await registered(await createTenant(), again(number), kind);
      expectError(await call('POST', `/admin/senders/${second}/approve`, { auth: 'admin' }), 409, 'conflict', 'id');
      expect((await harness.db('senders').where({ id: second }).first()).status).to.equal('pending');
    });
  }

  it("approves the number for a second account once the first one's sender is suspended", async () => {
    const number = randomLongCode();
    const first = await registered(await createTenant(), number, 'long_code');
    await call('POST', `/admin/senders/${first}/approve`, { auth: 'admin' });
    const second = await registered(await createTenant(), number, 'long_code');
    expect((await call('POST', `/admin/senders/${first}/suspend`, { auth: 'admin' })).status).to.equal(200);
    expect((await call('POST', `/admin/senders/${second}/approve`, { auth: 'admin' })).body.data.status).to.equal('approved');
    expectError(await call('POST', `/admin/senders/${first}/approve`, { auth: 'admin' }), 409, 'conflict', 'id');
  });

  it('still lets several accounts have the same alphanumeric sender ID approved', async () => {
    for (let i = 0; i < 2; i += 1) {
      const created = await call('POST', '/senders/create', { auth: (await createTenant()).key, body: { sender_id: 'SharedName' } });
      expect((await call('POST', `/admin/senders/${created.body.data.id}/approve`, { auth: 'admin' })).status).to.equal(200);
    }
  });
});

describe('GET /admin/inbound-messages', () => {
  it("lists the messages no account holds with unowned=true, one account's with account_id, and every account's without filters", async () => {
    const tenant = await inboundTenant();
    const unheld = randomLongCode();
    const owned = await simulateInbound(tenant.routeId, { from: randomHandset(), to: tenant.number, body: 'Hello' });
    const lost = await simulateInbound(tenant.routeId, { from: randomHandset(), to: unheld, body: 'Is anyone there?' });
    expect(lost).to.include({ account_id: null, to: unheld });

    const unowned = await call('GET', '/admin/inbound-messages?unowned=true&limit=100', { auth: 'admin' });
    expect(unowned.status).to.equal(200);
    expect(unowned.body.data.every((message: { account_id: string | null }) => message.account_id === null)).to.equal(true);
    expect(unowned.body.data.find((message: { id: string }) => message.id === lost.id)).to.deep.equal(lost);

    const ofAccount = await call('GET', `/admin/inbound-messages?account_id=${tenant.accountId}`, { auth: 'admin' });
    expect(ofAccount.body.data).to.deep.equal([owned]);
    expect(ofAccount.body.pagination).to.deep.equal({ page: 1, limit: 50, total: 1, pages: 1, has_more: false });

    const all = (await call('GET', '/admin/inbound-messages?limit=100', { auth: 'admin' })).body.data.map((message: { id: string }) => message.id);
    expect(all.filter((id: string) => id === lost.id || id === owned.id)).to.deep.equal([lost.id, owned.id]);
  });

  for (const [query, param] of [
    ['unowned=maybe', 'unowned'],
    ['page=0', 'page'],
  ]) {
    it(`answers 400 parameter_invalid naming ${param} for ?${query}`, async () => {
      expectError(await call('GET', `/admin/inbound-messages?${query}`, { auth: 'admin' }), 400, 'parameter_invalid', param);
    });
  }
});
