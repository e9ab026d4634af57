import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { randomLongCode, randomShortCode } from '../support/inbound.ts';

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

  it('approves the number for a second account once the first one\'s sender is suspended', async () => {
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
