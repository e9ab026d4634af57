import { expect } from 'chai';
import { readSendChecks } from '../../db/send-checks.ts';
import { newId } from '../../domain/ids.ts';
import { addRoute, approvedSender, createTenant, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('the checks of a send, read in one statement', () => {
  it("answers the account's active routes in priority order beside its senders, blocklist and opt-outs", async () => {
    const tenant = await createTenant();
    await approvedSender(tenant);
    const middle = await addRoute(tenant.accountId, 3);
    const inactive = await addRoute(tenant.accountId, 5);
    await harness.db('routes').where({ id: inactive }).update({ is_active: false });
    const first = await addRoute(tenant.accountId, 1, { price: 0.02, prefixes: ['+44'] });
    const last = await addRoute(tenant.accountId, 9);
    await addRoute((await createTenant()).accountId, 0);
    await harness.db('blocklist_entries').insert({ id: newId('blk'), number: '+447700900001', account_id: tenant.accountId, reason: 'test' });

    const checks = await harness.db.transaction((trx) => readSendChecks(trx, tenant.accountId, ['Dispatch', 'Other'], ['+447700900001', '+447700900002']));

    expect(checks.routes.map((route) => route.id)).to.deep.equal([first, middle, last]);
    expect(checks.routes[0]).to.include({ price_per_segment: '0.0200', is_active: true, provider: 'simulator' });
    expect(checks.routes[0].prefixes).to.deep.equal(['+44']);
    expect(checks.routes[0].created_at).to.be.instanceOf(Date);
    expect(Object.keys(checks.routes[0])).to.not.include.members(['approved', 'blocked', 'opted_out', 'smart_encoding']);
    expect([...checks.approved]).to.deep.equal(['Dispatch']);
    expect([...checks.blocked]).to.deep.equal(['+447700900001']);
    expect([...checks.optedOut]).to.deep.equal([]);
    expect(checks.smartEncoding).to.equal(false);
  });

  it('answers no route, and still the checks, for an account without an active route', async () => {
    const tenant = await sendingTenant();
    await harness.db('routes').where({ id: tenant.routeIds[0] }).update({ is_active: false });
    const checks = await harness.db.transaction((trx) => readSendChecks(trx, tenant.accountId, ['Dispatch'], ['+447700900003']));
    expect(checks.routes).to.deep.equal([]);
    expect([...checks.approved]).to.deep.equal(['Dispatch']);
  });

  it("answers the account's smart encoding setting as it is in the reading transaction", async () => {
    const tenant = await sendingTenant();
    const checks = await harness.db.transaction(async (trx) => {
      await trx('accounts').where({ id: tenant.accountId }).update({ smart_encoding: true });
      return readSendChecks(trx, tenant.accountId, ['Dispatch'], ['+447700900004']);
    });
    expect(checks.smartEncoding).to.equal(true);
    expect(checks.routes).to.have.length(1);
  });
});
