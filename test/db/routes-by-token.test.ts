import { expect } from 'chai';
import { findRouteByDlrToken } from '../../db/routes.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('the route lookup by callback token', () => {
  it('answers each of the lookups made together with its own route, or none', async () => {
    const tenants = await Promise.all([sendingTenant(), sendingTenant()]);
    const routes = await harness
      .db('routes')
      .whereIn(
        'id',
        tenants.map(({ routeIds }) => routeIds[0]),
      )
      .orderBy('id', 'desc')
      .select('id', 'dlr_token');
    // Made in one turn of the event loop, they share one statement; newest route first, an unknown token between.
    const tokens = [routes[0].dlr_token, 'z'.repeat(32), routes[1].dlr_token, 'with\u0000nul'];
    const found = await Promise.all(tokens.map((token) => findRouteByDlrToken(harness.db, token)));
    expect(found.map((route) => route?.id)).to.deep.equal([routes[0].id, undefined, routes[1].id, undefined]);
  });
});
