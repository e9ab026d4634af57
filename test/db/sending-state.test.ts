import { expect } from 'chai';
import { sendingStateOfAccounts } from '../../db/routes.ts';
import { createTenant, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe("the send worker's read of its accounts", () => {
  it('answers each account whether it may send and its active routes in priority order', async () => {
    const [withRoutes, suspended, withoutRoutes] = await Promise.all([sendingTenant({ routes: [{}, {}, {}] }), sendingTenant(), createTenant()]);
    const [first, inactive, last] = withRoutes.routeIds;
    // Tried in priority order: the last route first, the first last; the inactive one not at all.
    await harness.db('account_routes').where({ account_id: withRoutes.accountId, route_id: first }).update({ priority: 10 });
    await harness.db('routes').where({ id: inactive }).update({ is_active: false });
    await harness.db('accounts').where({ id: suspended.accountId }).update({ status: 'suspended' });

    const accountIds = [withRoutes.accountId, suspended.accountId, withoutRoutes.accountId, 'acct_none'];
    const states = await sendingStateOfAccounts(harness.db, accountIds);
    const summary = states.map(({ active, routes }, index) => [accountIds[index], active, routes.map((route) => route.id)]);
    expect(summary).to.deep.equal([
      [withRoutes.accountId, true, [last, first]],
      [suspended.accountId, false, suspended.routeIds],
      [withoutRoutes.accountId, true, []],
      ['acct_none', false, []],
    ]);
    expect(states[0].routes[0]).to.include({ id: last, is_active: true, provider: 'simulator', price_per_segment: '0.0100' });
  });
});
