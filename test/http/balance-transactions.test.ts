import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('GET /balance/transactions', function () {
  this.timeout(30_000);

  /** Opening credit 5, a delivered message (debit), a rejected one (debit and refund), then a credit of 2. */
  async function ledgerWithEveryKind() {
    const tenant = await sendingTenant({
      balance: 5,
      routes: [
        { price: 0.1, prefixes: ['+1'], config: { outcome: 'delivered', dlr_delay_ms: 10 } },
        { price: 0.25, prefixes: ['+44'], config: { outcome: 'rejected' } },
      ],
    });
    const delivered = (await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+12127000042', from: 'Dispatch', body: 'Hi' } })).body.data;
    const rejected = (await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+447911123456', from: 'Dispatch', body: 'Hi' } })).body.data;
    await waitForMessage(tenant, rejected.id, (message) => message.status === 'failed');
    await waitForMessage(tenant, delivered.id, (message) => message.status === 'delivered');
    expect((await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 2, description: 'Top-up' } })).status).to.equal(
      200,
    );
    return { tenant, delivered, rejected };
  }

  it('lists every change of the balance, newest first, each with the balance it left, adding up to the balance', async () => {
    const { tenant, delivered, rejected } = await ledgerWithEveryKind();
    const response = await call('GET', '/balance/transactions', { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.pagination).to.deep.equal({ page: 1, limit: 50, total: 5, pages: 1, has_more: false });
    const rows = response.body.data;
    expect(rows.map((row) => [row.type, row.amount, row.message_id])).to.deep.equal([
      ['credit', 2, null],
      ['refund', 0.25, rejected.id],
      ['debit', -0.25, rejected.id],
      ['debit', -0.1, delivered.id],
      ['credit', 5, null],
    ]);
    const recorded = await harness.db('ledger_entries').where({ account_id: tenant.accountId }).orderBy('id', 'desc');
    expect(rows.map((row) => row.id)).to.deep.equal(recorded.map((row) => `txn_${row.id}`));
    expect(rows[0]).to.include({ object: 'balance_transaction', currency: 'USD', description: 'Top-up', balance_after: 6.9 });
    const balance = (await call('GET', '/balance', { auth: tenant.key })).body.data.balance;
    expect(rows[0].balance_after).to.equal(balance);
    expect(rows.reduce((sum, row) => sum + Math.round(row.amount * 10_000), 0)).to.equal(Math.round(balance * 10_000));
  });

  it('filters by type, message and time, and pages', async () => {
    const { tenant, rejected } = await ledgerWithEveryKind();
    const list = async (query: string) => (await call('GET', `/balance/transactions${query}`, { auth: tenant.key })).body;

    expect((await list('?type=debit')).data.map((row) => row.amount).sort()).to.deep.equal([-0.1, -0.25].sort());
    expect((await list('?type=refund')).data.map((row) => row.message_id)).to.deep.equal([rejected.id]);
    expect((await list(`?message_id=${rejected.id}`)).data.map((row) => row.type)).to.deep.equal(['refund', 'debit']);
    expect((await list('?type=adjustment')).pagination.total).to.equal(0);

    // Whole seconds apart, so that the bounds (exclusive) fall exactly on a row's time.
    const ids = (await harness.db('ledger_entries').where({ account_id: tenant.accountId }).orderBy('id')).map((row) => row.id);
    for (const [index, id] of ids.entries())
      await harness
        .db('ledger_entries')
        .where({ id })
        .update({ created_at: new Date(Date.UTC(2026, 0, 1, 0, 0, index)) });
    const all = (await list('')).data;
    expect(all.map((row) => row.id)).to.deep.equal(ids.map((id) => `txn_${id}`).reverse());
    const middle = encodeURIComponent(all[2].created_at);
    expect((await list(`?created_after=${middle}`)).data.map((row) => row.id)).to.deep.equal(all.slice(0, 2).map((row) => row.id));
    expect((await list(`?created_before=${middle}`)).data.map((row) => row.id)).to.deep.equal(all.slice(3).map((row) => row.id));
    expect(
      (await list(`?created_after=${encodeURIComponent(all[4].created_at)}&created_before=${encodeURIComponent(all[0].created_at)}&type=debit`)).data.map(
        (row) => row.id,
      ),
    ).to.deep.equal(
      all
        .slice(1, 4)
        .filter((row) => row.type === 'debit')
        .map((row) => row.id),
    );

    const second = await list('?limit=2&page=2');
    expect(second.pagination).to.deep.equal({ page: 2, limit: 2, total: 5, pages: 3, has_more: true });
    expect(second.data.map((row) => row.id)).to.deep.equal(all.slice(2, 4).map((row) => row.id));
  });

  it("lists only the caller's account", async () => {
    const { rejected } = await ledgerWithEveryKind();
    const other = await sendingTenant();
    const response = await call('GET', `/balance/transactions?message_id=${rejected.id}`, { auth: other.key });
    expect(response.body.data).to.deep.equal([]);
    expect((await call('GET', '/balance/transactions', { auth: other.key })).body.data.map((row) => row.type)).to.deep.equal(['credit']);
  });

  for (const [query, param] of [
    ['?type=bonus', 'type'],
    ['?created_after=yesterday', 'created_after'],
    ['?created_before=2025-13-01T00:00:00Z', 'created_before'],
    ['?limit=101', 'limit'],
    ['?page=0', 'page'],
  ] as const) {
    it(`answers 400 naming ${param} to ${query}`, async () => {
      const tenant = await sendingTenant();
      expectError(await call('GET', `/balance/transactions${query}`, { auth: tenant.key }), 400, 'parameter_invalid', param);
    });
  }

  it('answers 403 to a key without balance:read', async () => {
    const tenant = await sendingTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Sender', permissions: ['sms:send', 'sms:read'] });
    const response = await call('GET', '/balance/transactions', { auth: key.plain_key });
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.equal({ required_scope: 'balance:read' });
  });
});
