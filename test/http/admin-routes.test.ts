import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call, expectError } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';

const routeBody = (extra: Record<string, unknown> = {}) => ({
  name: `route-${randomBase62(8)}`,
  provider: 'http',
  config: { url: 'https://sms.example.com/send', token: 'provider-secret' },
  price_per_segment: 0.0125,
  ...extra,
});

describe('POST /admin/routes', () => {
  it('creates a route and never returns its config', async () => {
    const body = routeBody({ prefixes: ['+44', '+353'] });
    const response = await call('POST', '/admin/routes', { auth: 'admin', body });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.deep.include({
      object: 'route',
      name: body.name,
      provider: 'http',
      price_per_segment: 0.0125,
      prefixes: ['+44', '+353'],
      is_active: true,
    });
    expect(response.body.data.id).to.be.a('number');
    expect(JSON.stringify(response.body)).to.not.include('provider-secret');
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['an unknown provider', { provider: 'carrier-pigeon' }, 'parameter_invalid', 'provider'],
    ['an http config without url', { config: { token: 'x' } }, 'parameter_invalid', 'config.url'],
    ['a simulator config with an unknown outcome', { provider: 'simulator', config: { outcome: 'maybe' } }, 'parameter_invalid', 'config.outcome'],
    [
      'an smpp config without a password',
      { provider: 'smpp', config: { host: 'smsc.example.com', port: 2775, system_id: 'x' } },
      'parameter_invalid',
      'config.password',
    ],
    ['a negative price', { price_per_segment: -1 }, 'parameter_invalid', 'price_per_segment'],
    ['a price with five decimals', { price_per_segment: 0.00001 }, 'parameter_invalid', 'price_per_segment'],
    ['a prefix that is not E.164', { prefixes: ['44'] }, 'parameter_invalid', 'prefixes[0]'],
    ['a missing name', { name: undefined }, 'parameter_missing', 'name'],
  ];
  for (const [what, change, code, param] of invalid) {
    it(`answers 400 ${code} naming ${param} for ${what}`, async () => {
      expectError(await call('POST', '/admin/routes', { auth: 'admin', body: routeBody(change) }), 400, code, param);
    });
  }

  it('answers 409 for a name already used', async () => {
    const body = routeBody();
    await call('POST', '/admin/routes', { auth: 'admin', body });
    expectError(await call('POST', '/admin/routes', { auth: 'admin', body }), 409, 'conflict', 'name');
  });
});

describe('GET /admin/routes and /admin/routes/{id}', () => {
  it('lists routes by ascending id and answers one', async () => {
    const a = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    const b = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    const list = await call('GET', '/admin/routes', { auth: 'admin' });
    expect(list.status).to.equal(200);
    const ids = list.body.data.data.map((r: { id: number }) => r.id);
    expect(ids).to.include.members([a.id, b.id]);
    expect(ids.indexOf(a.id)).to.be.below(ids.indexOf(b.id));
    expect((await call('GET', `/admin/routes/${a.id}`, { auth: 'admin' })).body.data).to.deep.equal(a);
  });

  it('answers 404 for an unknown route and 400 for an id that is not an integer', async () => {
    expectError(await call('GET', '/admin/routes/999999', { auth: 'admin' }), 404, 'resource_not_found');
    expectError(await call('GET', '/admin/routes/abc', { auth: 'admin' }), 400, 'parameter_invalid', 'id');
  });
});

describe('PATCH /admin/routes/{id}', () => {
  it('changes only the fields given', async () => {
    const route = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    const response = await call('PATCH', `/admin/routes/${route.id}`, { auth: 'admin', body: { price_per_segment: 0.02, is_active: false } });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ name: route.name, price_per_segment: 0.02, is_active: false });
  });

  it('requires a config when the provider changes, and checks it against the new provider', async () => {
    const route = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    expectError(await call('PATCH', `/admin/routes/${route.id}`, { auth: 'admin', body: { provider: 'simulator' } }), 400, 'parameter_missing', 'config');
    expectError(
      await call('PATCH', `/admin/routes/${route.id}`, { auth: 'admin', body: { provider: 'simulator', config: { url: 'https://x' } } }),
      400,
      'parameter_invalid',
    );
    const changed = await call('PATCH', `/admin/routes/${route.id}`, { auth: 'admin', body: { provider: 'simulator', config: { outcome: 'delivered' } } });
    expect(changed.body.data.provider).to.equal('simulator');
  });

  it('answers 400 for an empty body, 404 for an unknown route, 409 for a taken name', async () => {
    const first = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    const second = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    expectError(await call('PATCH', `/admin/routes/${first.id}`, { auth: 'admin', body: {} }), 400, 'parameter_invalid');
    expectError(await call('PATCH', '/admin/routes/999999', { auth: 'admin', body: { is_active: true } }), 404, 'resource_not_found');
    expectError(await call('PATCH', `/admin/routes/${second.id}`, { auth: 'admin', body: { name: first.name } }), 409, 'conflict', 'name');
  });
});

describe('PUT and DELETE /admin/accounts/{id}/routes/{route_id}', () => {
  it('assigns a route, changes its priority, and removes it', async () => {
    const tenant = await createTenant();
    const route = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    const assigned = await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${route.id}`, { auth: 'admin', body: { priority: 3 } });
    expect(assigned.status).to.equal(200);
    expect(assigned.body.data).to.include({ object: 'route_assignment', account_id: tenant.accountId, route_id: route.id, priority: 3 });
    const moved = await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${route.id}`, { auth: 'admin', body: { priority: 1 } });
    expect(moved.body.data.priority).to.equal(1);
    const removed = await call('DELETE', `/admin/accounts/${tenant.accountId}/routes/${route.id}`, { auth: 'admin' });
    expect(removed.body.data).to.deep.equal({ id: String(route.id), object: 'route_assignment', deleted: true });
    expectError(await call('DELETE', `/admin/accounts/${tenant.accountId}/routes/${route.id}`, { auth: 'admin' }), 404, 'resource_not_found');
  });

  it('answers 409 when another route of the account holds the priority', async () => {
    const tenant = await createTenant();
    const [a, b] = [
      (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data,
      (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data,
    ];
    await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${a.id}`, { auth: 'admin', body: { priority: 0 } });
    expectError(await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${b.id}`, { auth: 'admin', body: { priority: 0 } }), 409, 'conflict', 'priority');
  });

  it('answers 404 for an unknown account or route and 400 for a bad priority', async () => {
    const tenant = await createTenant();
    const route = (await call('POST', '/admin/routes', { auth: 'admin', body: routeBody() })).body.data;
    expectError(
      await call('PUT', `/admin/accounts/acct_000000000000000000000000/routes/${route.id}`, { auth: 'admin', body: { priority: 0 } }),
      404,
      'resource_not_found',
    );
    expectError(await call('PUT', `/admin/accounts/${tenant.accountId}/routes/999999`, { auth: 'admin', body: { priority: 0 } }), 404, 'resource_not_found');
    expectError(
      await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${route.id}`, { auth: 'admin', body: { priority: -1 } }),
      400,
      'parameter_invalid',
      'priority',
    );
    expectError(await call('DELETE', `/admin/accounts/${tenant.accountId}/routes/abc`, { auth: 'admin' }), 400, 'parameter_invalid', 'route_id');
  });
});

describe('POST and DELETE /admin/blocklist', () => {
  // A global entry blocks the number for every test of the run: a number of its own, never one
  // that other tests send to, and removed even when the test fails.
  const unusedNumber = () => `+4420${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
  const unblock = (number: string, accountId?: string) =>
    call('DELETE', `/admin/blocklist/${encodeURIComponent(number)}${accountId ? `?account_id=${accountId}` : ''}`, { auth: 'admin' });

  it('blocks a number for every account or for one, and unblocks it', async () => {
    const tenant = await createTenant();
    const number = unusedNumber();
    try {
      const global = await call('POST', '/admin/blocklist', { auth: 'admin', body: { number, reason: 'Complaint' } });
      expect(global.status).to.equal(201);
      expect(global.body.data).to.include({ object: 'blocklist_entry', number, account_id: null, reason: 'Complaint' });
      const scoped = await call('POST', '/admin/blocklist', { auth: 'admin', body: { number, account_id: tenant.accountId } });
      expect(scoped.body.data).to.include({ account_id: tenant.accountId, reason: null });
      const removed = await unblock(number, tenant.accountId);
      expect(removed.body.data).to.deep.equal({ id: scoped.body.data.id, object: 'blocklist_entry', deleted: true });
      expect((await unblock(number)).body.data.id).to.equal(global.body.data.id);
    } finally {
      await unblock(number);
    }
  });

  it('answers 409 for a duplicate, 404 for an unknown account or entry, 400 for a number not in E.164', async () => {
    const number = unusedNumber();
    try {
      await call('POST', '/admin/blocklist', { auth: 'admin', body: { number } });
      expectError(await call('POST', '/admin/blocklist', { auth: 'admin', body: { number } }), 409, 'conflict', 'number');
      expectError(
        await call('POST', '/admin/blocklist', { auth: 'admin', body: { number, account_id: 'acct_000000000000000000000000' } }),
        404,
        'resource_not_found',
      );
      expectError(await call('POST', '/admin/blocklist', { auth: 'admin', body: { number: '4155550189' } }), 400, 'parameter_invalid', 'number');
      expectError(await unblock(unusedNumber()), 404, 'resource_not_found');
      expectError(await call('DELETE', '/admin/blocklist/12345', { auth: 'admin' }), 400, 'parameter_invalid', 'number');
    } finally {
      await unblock(number);
    }
  });
});
