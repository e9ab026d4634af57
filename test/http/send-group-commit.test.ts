import { expect } from 'chai';
import { findAccount } from '../../db/accounts.ts';
import type { ApiKeyRow } from '../../db/api-keys.ts';
import { ledgerSum } from '../../db/ledger.ts';
import { jobQueueOf } from '../../db/queues.ts';
import { SendGroupCommit } from '../../domain/send-group-commit.ts';
import { call } from '../support/client.ts';
import { createAdminKey, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/** Single sends arriving together share transactions (group commit); each keeps the outcome it would have had alone. */

const TO = '+14155550100';

const sendAtOnce = (count: number, auth: (i: number) => string, from: (i: number) => string = () => 'Dispatch') =>
  Promise.all(Array.from({ length: count }, (_, i) => call('POST', '/messages/send', { auth: auth(i), body: { to: TO, from: from(i), body: `Group ${i}` } })));

const statusCounts = (responses: { status: number }[]) =>
  responses.reduce<Record<number, number>>((counts, { status }) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {});

const balanceOf = async (tenant: Tenant) => (await harness.db('accounts').where({ id: tenant.accountId }).first('balance')).balance;

describe('single sends committed in groups', function () {
  // Thirty to forty requests at once: on a loaded 2-core machine that may take a while.
  this.timeout(60_000);

  it('shares one transaction among the sends that arrive together, at most 64 to a group', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const account = await findAccount(harness.db, tenant.accountId);
    const apiKey: ApiKeyRow = await harness.db('api_keys').where({ id: tenant.keyId }).first();
    const sends = new SendGroupCommit(harness.db, jobQueueOf(harness.dispatch.boss), harness.clock.now);
    // All in one tick: one group of 64 and, beside it, one of the other 6.
    const accepted = await Promise.all(
      Array.from({ length: 70 }, (_, i) => sends.accept({ account: account!, apiKey }, { to: TO, from: 'Dispatch', body: `Group ${i}` })),
    );
    const stored = await harness.db('messages').where({ account_id: tenant.accountId }).select('id', harness.db.raw('xmin::text AS transaction'));
    expect(stored.map((row) => row.id).sort()).to.deep.equal(accepted.map((message) => message.id).sort());
    // The rows carry the id of the transaction that wrote them.
    const perTransaction = new Map<string, number>();
    for (const { transaction } of stored) perTransaction.set(transaction, (perTransaction.get(transaction) ?? 0) + 1);
    expect([...perTransaction.values()].sort((a, b) => a - b)).to.deep.equal([6, 64]);
    expect(await balanceOf(tenant)).to.equal('9.3000');
  });

  it("keeps the other accounts' sends together when one account's balance runs out inside the group, and takes that account's one by one in arrival order", async () => {
    const [rich, poor] = [await sendingTenant({ balance: 10 }), await sendingTenant({ balance: 0.05 })];
    const callerOf = async (tenant: Tenant) => ({
      account: (await findAccount(harness.db, tenant.accountId))!,
      apiKey: (await harness.db('api_keys').where({ id: tenant.keyId }).first()) as ApiKeyRow,
    });
    const [richCaller, poorCaller] = [await callerOf(rich), await callerOf(poor)];
    const sends = new SendGroupCommit(harness.db, jobQueueOf(harness.dispatch.boss), harness.clock.now);
    // All in one tick, one group: the poor account's balance covers 5 of its 10 sends (0.01 each).
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => sends.accept(i % 3 === 0 ? poorCaller : richCaller, { to: TO, from: 'Dispatch', body: `Group ${i}` })),
    );
    const poorOutcomes = outcomes.filter((_, i) => i % 3 === 0);
    expect(poorOutcomes.map((outcome) => outcome.status)).to.deep.equal([...Array(5).fill('fulfilled'), ...Array(5).fill('rejected')]);
    for (const refused of poorOutcomes.slice(5)) expect((refused as PromiseRejectedResult).reason).to.include({ code: 'insufficient_balance' });
    expect(outcomes.filter((_, i) => i % 3 !== 0).every((outcome) => outcome.status === 'fulfilled')).to.equal(true);
    // Debits are never updated, so each carries the id of the transaction that accepted its message.
    const transactionsOf = async (tenant: Tenant) =>
      new Set(
        (await harness.db('ledger_entries').where({ account_id: tenant.accountId, kind: 'debit' }).select(harness.db.raw('xmin::text AS transaction'))).map(
          (row) => row.transaction,
        ),
      );
    expect((await transactionsOf(rich)).size).to.equal(1);
    expect((await transactionsOf(poor)).size).to.equal(5);
    expect(await balanceOf(poor)).to.equal('0.0000');
    expect(await ledgerSum(harness.db, poor.accountId)).to.equal('0.0000');
    expect(await balanceOf(rich)).to.equal('9.8000');
  });

  it('refuses a send alone for its own fault and accepts its neighbours', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const responses = await sendAtOnce(
      30,
      () => tenant.key,
      (i) => (i % 3 === 0 ? 'Nobody' : 'Dispatch'),
    );
    expect(statusCounts(responses)).to.deep.equal({ 201: 20, 400: 10 });
    responses.forEach((response, i) => {
      if (i % 3 === 0) expect(response.body.error).to.include({ code: 'sender_not_approved', param: 'from' });
    });
    const stored = await harness.db('messages').where({ account_id: tenant.accountId }).pluck('id');
    expect(stored.sort()).to.deep.equal(
      responses
        .filter((r) => r.status === 201)
        .map((r) => r.body.data.id)
        .sort(),
    );
    expect(await balanceOf(tenant)).to.equal('9.8000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('9.8000');
  });

  it('charges in arrival order while the balance lasts, exactly, when the balance runs out inside a group', async () => {
    const tenant = await sendingTenant({ balance: 0.25 });
    const responses = await sendAtOnce(40, () => tenant.key);
    expect(statusCounts(responses)).to.deep.equal({ 201: 25, 402: 15 });
    for (const refused of responses.filter((r) => r.status === 402)) expect(refused.body.error).to.include({ code: 'insufficient_balance' });
    expect(await balanceOf(tenant)).to.equal('0.0000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('0.0000');
    expect(await harness.db('messages').where({ account_id: tenant.accountId }).count({ n: '*' }).first()).to.deep.equal({ n: 25 });
  });

  it("counts a key's daily limit exactly when a group would pass it", async () => {
    // The last second of a day: every send of the group still counts on that day.
    harness.clock.set(new Date('2031-05-20T23:59:59.000Z'));
    const tenant = await sendingTenant({ balance: 10 });
    const limited = await createAdminKey(tenant.accountId, { name: 'Ten a day', daily_limit: 10 });
    const responses = await sendAtOnce(30, (i) => (i % 2 === 0 ? limited.plain_key : tenant.key));
    const throughLimited = responses.filter((_, i) => i % 2 === 0);
    expect(statusCounts(throughLimited)).to.deep.equal({ 201: 10, 429: 5 });
    expect(statusCounts(responses.filter((_, i) => i % 2 === 1))).to.deep.equal({ 201: 15 });
    for (const refused of throughLimited.filter((r) => r.status === 429)) expect(refused.body.error).to.include({ code: 'daily_limit_exceeded' });
    expect(await harness.db('messages').where({ api_key_id: limited.id }).count({ n: '*' }).first()).to.deep.equal({ n: 10 });
    expect(await balanceOf(tenant)).to.equal('9.7500');
  });
});
