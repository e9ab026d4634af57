import { expect } from 'chai';
import { findAccount } from '../../db/accounts.ts';
import { jobQueueOf } from '../../db/queues.ts';
import { ApiError } from '../../domain/errors.ts';
import { optOut } from '../../domain/opt-outs.ts';
import { acceptMessage } from '../../domain/sending.ts';
import { call, expectError } from '../support/client.ts';
import { sendingTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const OUT = '+447911123456';
const IN = '+12125550143';

async function optedOut(tenant: Tenant, numbers: string[]): Promise<void> {
  const response = await call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers } });
  expect(response.body.data.added).to.equal(numbers.length);
}

async function accountState(accountId: string) {
  return {
    balance: (await harness.db('accounts').where({ id: accountId }).first()).balance,
    messages: await harness.db('messages').where({ account_id: accountId }).count({ n: '*' }),
    ledger: await harness.db('ledger_entries').where({ account_id: accountId }).count({ n: '*' }),
  };
}

describe('sending to an opted-out number', () => {
  it('POST /messages/send answers 400 recipient_opted_out naming to, and stores and charges nothing', async () => {
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.05 }] });
    await optedOut(tenant, [OUT]);
    const before = await accountState(tenant.accountId);
    const refused = await call('POST', '/messages/send', { auth: tenant.key, body: { to: OUT, from: 'Dispatch', body: 'Sale today' } });
    expectError(refused, 400, 'recipient_opted_out', 'to');
    expect(refused.body.error.type).to.equal('invalid_request_error');
    expect(await accountState(tenant.accountId)).to.deep.equal(before);

    const other = await call('POST', '/messages/send', { auth: tenant.key, body: { to: IN, from: 'Dispatch', body: 'Sale today' } });
    expect(other.status).to.equal(201);
  });

  it('POST /messages/bulk fails only the opted-out items, charging nothing for them', async () => {
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.05 }] });
    await optedOut(tenant, [OUT]);
    const response = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: [IN, OUT, '+447911223344', OUT], from: 'Dispatch', body: 'Sale today' },
    });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({ total: 4, sent: 2, failed: 2 });
    expect(response.body.data.messages.map((m) => [m.to, m.status, m.cost, m.error?.code ?? null])).to.deep.equal([
      [IN, 'pending', 0.05, null],
      [OUT, 'failed', 0, 'recipient_opted_out'],
      ['+447911223344', 'pending', 0.05, null],
      [OUT, 'failed', 0, 'recipient_opted_out'],
    ]);
    expect((await accountState(tenant.accountId)).balance).to.equal('0.9000');
  });

  it('is per account: another account still sends to the number', async () => {
    const tenant = await sendingTenant();
    const other = await sendingTenant();
    await optedOut(tenant, [OUT]);
    expect((await call('POST', '/messages/send', { auth: other.key, body: { to: OUT, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
  });

  it('sends again once the opt-out is removed', async () => {
    const tenant = await sendingTenant();
    await optedOut(tenant, [OUT]);
    expect((await call('DELETE', `/opt-outs/${encodeURIComponent(OUT)}`, { auth: tenant.key })).status).to.equal(200);
    expect((await call('POST', '/messages/send', { auth: tenant.key, body: { to: OUT, from: 'Dispatch', body: 'Welcome back' } })).status).to.equal(201);
  });

  it('lets through the one opt-out confirmation (optOutConfirmation), sent in the transaction that opted the number out, and nothing else', async () => {
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.05 }] });
    const jobs = jobQueueOf(harness.dispatch.boss);
    const account = (await findAccount(harness.db, tenant.accountId))!;
    const confirmation = await harness.db.transaction(async (trx) => {
      expect(await optOut(trx, jobs, tenant.accountId, OUT, { source: 'keyword', keyword: 'STOP' })).to.equal(true);
      expect(await optOut(trx, jobs, tenant.accountId, OUT, { source: 'keyword', keyword: 'STOP' })).to.equal(false);
      return acceptMessage(trx, jobs, { account, apiKey: null }, { to: OUT, from: 'Dispatch', body: 'You are unsubscribed.' }, { optOutConfirmation: true });
    });
    expect(confirmation).to.include({ to: OUT, status: 'pending', cost: '0.0500', api_key_id: null });

    const refused = await harness.db
      .transaction((trx) => acceptMessage(trx, jobs, { account, apiKey: null }, { to: OUT, from: 'Dispatch', body: 'One more thing' }))
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(refused).to.be.instanceOf(ApiError).and.to.include({ status: 400, code: 'recipient_opted_out', param: 'to' });
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(1);
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId, number: OUT }).first()).to.include({ source: 'keyword', keyword: 'STOP' });
  });
});
