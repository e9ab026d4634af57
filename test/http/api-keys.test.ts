import { expect } from 'chai';
import { hashSecret } from '../../domain/api-key-secret.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('POST /api-keys/create', () => {
  it('creates a key with every field, showing the plaintext once and storing only its hash', async () => {
    const tenant = await createTenant();
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const body = {
      name: 'Reporting',
      permissions: ['sms:read', 'balance:read'],
      rate_limit: 120,
      daily_limit: 1000,
      monthly_limit: 20000,
      allowed_ips: ['203.0.113.7', '198.51.100.0/24'],
      expires_at: expiresAt,
    };
    const response = await call('POST', '/api-keys/create', { auth: tenant.key, body });
    expect(response.status).to.equal(201);
    const key = response.body.data;
    expect(key).to.deep.include({ ...body, object: 'api_key', is_active: true, last_used_at: null });
    expect(key.expires_at).to.equal(expiresAt);
    expect(key.plain_key).to.match(/^ds_live_[0-9A-Za-z]{49}$/);
    expect(key.plain_key_notice).to.match(/only once/);
    expect(key.key_hint).to.equal(`ds_live_${key.plain_key.slice(8, 12)}...${key.plain_key.slice(-4)}`);

    const stored = await harness.db('api_keys').where({ id: key.id }).first();
    expect(stored.key_hash.equals(hashSecret(key.plain_key))).to.equal(true);
    expect(JSON.stringify(stored)).to.not.include(key.plain_key.slice(8));

    const listed = await call('GET', '/api-keys', { auth: tenant.key });
    const entry = listed.body.data.data.find((k: { id: string }) => k.id === key.id);
    expect(entry).to.not.have.property('plain_key');
    expect(entry).to.not.have.property('plain_key_notice');
  });

  it('gives sms:send and sms:read with a 600 per minute limit when nothing else is asked', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Defaults' } });
    expect(response.body.data).to.deep.include({
      permissions: ['sms:send', 'sms:read'],
      rate_limit: 600,
      daily_limit: null,
      monthly_limit: null,
      allowed_ips: null,
      expires_at: null,
    });
  });

  it('makes a key that authenticates at once', async () => {
    const tenant = await createTenant();
    const created = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Fresh', permissions: ['account:read'] } });
    expect((await call('GET', '/account', { auth: created.body.data.plain_key })).status).to.equal(200);
  });

  it('answers 403 when asked for a scope the calling key does not hold, and creates nothing', async () => {
    const tenant = await createTenant();
    const limited = await createAdminKey(tenant.accountId, { name: 'Key admin', permissions: ['keys:write', 'sms:read'] });
    const response = await call('POST', '/api-keys/create', { auth: limited.plain_key, body: { name: 'Escalation', permissions: ['sms:read', 'sms:send'] } });
    expectError(response, 403, 'forbidden', 'permissions');
    expect(response.body.error.details).to.deep.equal({ reason: 'broader_than_calling_key', scopes: ['sms:send'] });
    expect(await harness.db('api_keys').where({ account_id: tenant.accountId, name: 'Escalation' })).to.have.length(0);
  });

  it('answers 403 when the default scopes exceed the calling key', async () => {
    const tenant = await createTenant();
    const limited = await createAdminKey(tenant.accountId, { name: 'Key admin', permissions: ['keys:write', 'sms:read'] });
    expectError(await call('POST', '/api-keys/create', { auth: limited.plain_key, body: { name: 'Defaults' } }), 403, 'forbidden', 'permissions');
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a missing name', {}, 'parameter_missing', 'name'],
    ['an unknown scope', { name: 'x', permissions: ['sms:everything'] }, 'parameter_invalid', 'permissions[0]'],
    ['an empty permissions list', { name: 'x', permissions: [] }, 'parameter_invalid', 'permissions'],
    ['rate_limit 0', { name: 'x', rate_limit: 0 }, 'parameter_invalid', 'rate_limit'],
    ['rate_limit 6001', { name: 'x', rate_limit: 6001 }, 'parameter_invalid', 'rate_limit'],
    ['daily_limit 0', { name: 'x', daily_limit: 0 }, 'parameter_invalid', 'daily_limit'],
    ['monthly_limit 0', { name: 'x', monthly_limit: 0 }, 'parameter_invalid', 'monthly_limit'],
    ['an allowed_ips entry that is not IPv4', { name: 'x', allowed_ips: ['203.0.113.7', '2001:db8::1'] }, 'parameter_invalid', 'allowed_ips[1]'],
    ['an expires_at that is not a date-time', { name: 'x', expires_at: 'tomorrow' }, 'parameter_invalid', 'expires_at'],
    ['an expires_at in the past', { name: 'x', expires_at: '2020-01-01T00:00:00Z' }, 'parameter_invalid', 'expires_at'],
    ['an attempt to set the key itself', { name: 'x', plain_key: 'ds_live_chosen' }, 'parameter_unknown', 'plain_key'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} naming ${param} for ${what}`, async () => {
      const tenant = await createTenant();
      const before = await harness.db('api_keys').where({ account_id: tenant.accountId }).count({ n: '*' });
      expectError(await call('POST', '/api-keys/create', { auth: tenant.key, body }), 400, code, param);
      expect(await harness.db('api_keys').where({ account_id: tenant.accountId }).count({ n: '*' })).to.deep.equal(before);
    });
  }

  it('accepts the edges of every range', async () => {
    const tenant = await createTenant();
    const fastest = await createAdminKey(tenant.accountId, { name: 'Fastest', rate_limit: 6000 });
    for (const rateLimit of [1, 6000]) {
      expect(
        (await call('POST', '/api-keys/create', { auth: fastest.plain_key, body: { name: 'edge', rate_limit: rateLimit, daily_limit: 1, monthly_limit: 1 } }))
          .status,
      ).to.equal(201);
    }
  });
});

describe('a key creating keys', () => {
  const inAnHour = () => new Date(Date.now() + 3_600_000).toISOString();

  it("gives every omitted field the calling key's own restriction", async () => {
    const tenant = await createTenant();
    const expiresAt = inAnHour();
    const restricted = { rate_limit: 5, daily_limit: 1, monthly_limit: 20, allowed_ips: ['127.0.0.1'], expires_at: expiresAt };
    const creator = await createAdminKey(tenant.accountId, { name: 'Restricted', permissions: ['keys:write', 'sms:send', 'sms:read'], ...restricted });
    const response = await call('POST', '/api-keys/create', { auth: creator.plain_key, body: { name: 'Child' } });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    expect(response.body.data).to.deep.include({ ...restricted, permissions: ['sms:send', 'sms:read'] });
  });

  it('gives an omitted rate limit the default 600 when the calling key allows more', async () => {
    const tenant = await createTenant();
    const creator = await createAdminKey(tenant.accountId, { name: 'Fast', rate_limit: 6000 });
    const response = await call('POST', '/api-keys/create', { auth: creator.plain_key, body: { name: 'Child' } });
    expect(response.body.data.rate_limit).to.equal(600);
  });

  it('accepts a key exactly as narrow as itself, and an allowlist range its own entries cover only together', async () => {
    const tenant = await createTenant();
    const expiresAt = inAnHour();
    const own = { rate_limit: 50, daily_limit: 10, monthly_limit: 100, allowed_ips: ['127.0.0.0/25', '127.0.0.128/25'], expires_at: expiresAt };
    const creator = await createAdminKey(tenant.accountId, { name: 'Creator', permissions: ['keys:write', 'sms:read'], ...own });
    const same = await call('POST', '/api-keys/create', { auth: creator.plain_key, body: { name: 'Same', permissions: ['keys:write', 'sms:read'], ...own } });
    expect(same.status, JSON.stringify(same.body)).to.equal(201);
    const spanning = await call('POST', '/api-keys/create', {
      auth: creator.plain_key,
      body: { name: 'Spanning', permissions: ['sms:read'], allowed_ips: ['127.0.0.0/24', '127.0.0.9'] },
    });
    expect(spanning.status, JSON.stringify(spanning.body)).to.equal(201);
  });

  it('lets the admin API create any key for an account, whatever its keys hold', async () => {
    const tenant = await createTenant();
    await createAdminKey(tenant.accountId, { name: 'Narrow', permissions: ['sms:read'], rate_limit: 1, daily_limit: 1, allowed_ips: ['127.0.0.1'] });
    const broad = await createAdminKey(tenant.accountId, { name: 'Broad', rate_limit: 6000 });
    expect(broad.permissions).to.have.length(SCOPES.length);
  });
});

describe('GET /api-keys', () => {
  it("lists the account's keys newest first, without pagination", async () => {
    const tenant = await createTenant();
    const created = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Second' } });
    const response = await call('GET', '/api-keys', { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data.object).to.equal('list');
    expect(response.body).to.not.have.property('pagination');
    expect(response.body.data.data.map((k: { id: string }) => k.id)).to.deep.equal([created.body.data.id, tenant.keyId]);
  });

  it('shows last_used_at from the last request, without writing it on every request', async () => {
    const tenant = await createTenant();
    const before = Date.now();
    await call('GET', '/account', { auth: tenant.key });
    const stored = await harness.db('api_keys').where({ id: tenant.keyId }).first();
    expect(stored.last_used_at).to.equal(null);
    const listed = await call('GET', '/api-keys', { auth: tenant.key });
    const own = listed.body.data.data.find((k) => k.id === tenant.keyId)!;
    expect(Date.parse(own.last_used_at!)).to.be.at.least(before - 1000);
  });

  it('writes the held last-use times in one batch', async () => {
    const tenant = await createTenant();
    await call('GET', '/account', { auth: tenant.key });
    await harness.dispatch.flushKeyUsage();
    const stored = await harness.db('api_keys').where({ id: tenant.keyId }).first();
    expect(stored.last_used_at).to.be.an.instanceOf(Date);
  });
});

describe('GET /api-keys/current', () => {
  it('answers a read-only key itself, with its scopes and limits, as GET /api-keys lists it', async () => {
    const tenant = await createTenant();
    const reader = await createAdminKey(tenant.accountId, { name: 'Console', permissions: ['sms:read'], rate_limit: 120, daily_limit: 50 });
    const response = await call('GET', '/api-keys/current', { auth: reader.plain_key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.include({
      id: reader.id,
      object: 'api_key',
      name: 'Console',
      is_active: true,
      permissions: ['sms:read'],
      rate_limit: 120,
      daily_limit: 50,
    });
    expect(response.body.data.last_used_at, 'this request is a use').to.not.equal(null);
    const listed = (await call('GET', '/api-keys', { auth: tenant.key })).body.data.data.find((key) => key.id === reader.id)!;
    expect({ ...response.body.data, last_used_at: null }).to.deep.equal({ ...listed, last_used_at: null });
  });

  it('is served to a key holding any one scope, and still refuses such a key every other operation it lacks', async () => {
    const tenant = await createTenant();
    for (const scope of SCOPES) {
      const key = await createAdminKey(tenant.accountId, { name: `Only ${scope}`, permissions: [scope] });
      const response = await call('GET', '/api-keys/current', { auth: key.plain_key });
      expect(response.status, scope).to.equal(200);
      expect(response.body.data.permissions).to.deep.equal([scope]);
    }
    const reader = await createAdminKey(tenant.accountId, { name: 'Reader', permissions: ['sms:read'] });
    expectError(await call('GET', '/api-keys', { auth: reader.plain_key }), 403, 'forbidden');
  });

  it('answers 401 to a revoked key, and 401 without one', async () => {
    const tenant = await createTenant();
    const spare = await createAdminKey(tenant.accountId, { name: 'Spare', permissions: ['sms:read'] });
    expect((await call('GET', '/api-keys/current', { auth: spare.plain_key })).status).to.equal(200);
    expect((await call('DELETE', `/api-keys/${spare.id}`, { auth: tenant.key })).status).to.equal(200);
    expectError(await call('GET', '/api-keys/current', { auth: spare.plain_key }), 401, 'unauthorized');
    expectError(await call('GET', '/api-keys/current'), 401, 'unauthorized');
  });

  it('is a path of its own, never taken for a key id: DELETE answers 405 and revokes nothing', async () => {
    const tenant = await createTenant();
    const response = await call('DELETE', '/api-keys/current', { auth: tenant.key });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).to.equal('GET, HEAD');
    expect((await call('GET', '/api-keys/current', { auth: tenant.key })).body.data).to.include({ id: tenant.keyId, is_active: true });
  });

  it('answers 400 naming the query parameter that holds a NUL', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/api-keys/current?x=%00', { auth: tenant.key }), 400, 'parameter_invalid', 'x');
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('revokes a key: it stops working and stays listed with is_active false', async () => {
    const tenant = await createTenant();
    const other = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Old', permissions: ['sms:read'] } });
    const response = await call('DELETE', `/api-keys/${other.body.data.id}`, { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.equal({ id: other.body.data.id, object: 'api_key', deleted: true });
    expectError(await call('GET', '/messages', { auth: other.body.data.plain_key }), 401, 'unauthorized');
    const listed = await call('GET', '/api-keys', { auth: tenant.key });
    expect(listed.body.data.data.find((k) => k.id === other.body.data.id)!.is_active).to.equal(false);
  });

  it('answers 200 again when the key is already revoked', async () => {
    const tenant = await createTenant();
    const other = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Old', permissions: ['sms:read'] } });
    await call('DELETE', `/api-keys/${other.body.data.id}`, { auth: tenant.key });
    expect((await call('DELETE', `/api-keys/${other.body.data.id}`, { auth: tenant.key })).status).to.equal(200);
  });

  it('supports rotation: the new key works while the old one still does, until it is revoked', async () => {
    const tenant = await createTenant();
    const fresh = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'New', permissions: [...SCOPES] } });
    expect((await call('GET', '/account', { auth: tenant.key })).status).to.equal(200);
    expect((await call('GET', '/account', { auth: fresh.body.data.plain_key })).status).to.equal(200);
    await call('DELETE', `/api-keys/${tenant.keyId}`, { auth: fresh.body.data.plain_key });
    expectError(await call('GET', '/account', { auth: tenant.key }), 401, 'unauthorized');
    expect((await call('GET', '/account', { auth: fresh.body.data.plain_key })).status).to.equal(200);
  });

  it('answers 404 for an unknown key', async () => {
    const tenant = await createTenant();
    expectError(await call('DELETE', '/api-keys/key_000000000000000000000000', { auth: tenant.key }), 404, 'resource_not_found', 'id');
  });
});

describe('a key revoking keys', () => {
  it("cannot revoke the account's main key from a narrower key, which goes on working", async () => {
    const tenant = await createTenant();
    const narrow = await createAdminKey(tenant.accountId, { name: 'Key admin', permissions: ['keys:write'] });
    const response = await call('DELETE', `/api-keys/${tenant.keyId}`, { auth: narrow.plain_key });
    expectError(response, 403, 'forbidden', 'id');
    expect(response.body.error.details).to.deep.equal({ reason: 'broader_than_calling_key', field: 'permissions' });
    expect((await call('GET', '/account', { auth: tenant.key })).status).to.equal(200);
  });

  it('cannot revoke a key broader only in a limit', async () => {
    const tenant = await createTenant();
    const capped = await createAdminKey(tenant.accountId, { name: 'Capped', daily_limit: 1 });
    const response = await call('DELETE', `/api-keys/${tenant.keyId}`, { auth: capped.plain_key });
    expectError(response, 403, 'forbidden', 'id');
    expect(response.body.error.details).to.deep.equal({ reason: 'broader_than_calling_key', field: 'daily_limit' });
  });

  it('may revoke the keys it created, and itself', async () => {
    const tenant = await createTenant();
    const narrow = await createAdminKey(tenant.accountId, {
      name: 'Key admin',
      permissions: ['keys:write', 'sms:read'],
      rate_limit: 10,
      allowed_ips: ['127.0.0.1'],
    });
    const child = await call('POST', '/api-keys/create', { auth: narrow.plain_key, body: { name: 'Child', permissions: ['sms:read'] } });
    expect((await call('DELETE', `/api-keys/${child.body.data.id}`, { auth: narrow.plain_key })).status).to.equal(200);
    expect((await call('DELETE', `/api-keys/${narrow.id}`, { auth: narrow.plain_key })).status).to.equal(200);
    expectError(await call('GET', '/api-keys', { auth: narrow.plain_key }), 401, 'unauthorized');
  });
});
