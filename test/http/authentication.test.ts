import { expect } from 'chai';
import { normalizeIp } from '../../app/client-ip.ts';
import { setAccountStatus } from '../../db/accounts.ts';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, createTenant, eventually } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';
import { documentedOperations } from '../support/operations.ts';

describe('authentication', () => {
  it('answers 401 for an expired key, saying so, and lists it as inactive', async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Short-lived', expires_at: new Date(Date.now() + 60_000).toISOString() });
    expect((await call('GET', '/account', { auth: key.plain_key })).status).to.equal(200);
    // Changed behind Dispatch's back: the database announces it, and the key stops working within a second.
    await harness
      .db('api_keys')
      .where({ id: key.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    const response = await eventually(
      () => call('GET', '/account', { auth: key.plain_key }),
      (r) => r.status !== 200,
      { timeoutMs: 1000, what: 'the expiry to take effect' },
    );
    expectError(response, 401, 'unauthorized');
    expect(response.body.error.message).to.match(/expired/);
    const listed = await call('GET', '/api-keys', { auth: tenant.key });
    expect(listed.body.data.data.find((k) => k.id === key.id)!.is_active).to.equal(false);
  });

  it('answers 403 forbidden with the reason account_inactive for every key of a suspended account', async () => {
    const tenant = await createTenant();
    await setAccountStatus(harness.db, tenant.accountId, 'suspended');
    const response = await call('GET', '/account', { auth: tenant.key });
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.include({ reason: 'account_inactive' });
  });
});

describe('IP allowlists', () => {
  it('accepts an address on the list, as an address or inside a CIDR range', async () => {
    const tenant = await createTenant();
    for (const allowed of [['127.0.0.1'], ['10.0.0.1', '127.0.0.0/8']]) {
      const key = await createAdminKey(tenant.accountId, { name: 'Local', allowed_ips: allowed });
      expect((await call('GET', '/account', { auth: key.plain_key })).status).to.equal(200);
    }
  });

  it('with TRUST_PROXY takes the address the proxy appended, which a client cannot forge', async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Proxy', allowed_ips: ['203.0.113.7'] });
    const proxied = await startInstance(harness.database.url, { TRUST_PROXY: 'true' });
    try {
      const allowed = await call('GET', '/account', {
        auth: key.plain_key,
        baseUrl: proxied.baseUrl,
        headers: { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' },
      });
      expect(allowed.status).to.equal(200);
      const forged = await call('GET', '/account', {
        auth: key.plain_key,
        baseUrl: proxied.baseUrl,
        headers: { 'x-forwarded-for': '203.0.113.7, 198.51.100.1' },
      });
      expectError(forged, 403, 'forbidden');
      expect(forged.body.error.details).to.deep.include({ reason: 'ip_not_allowed' });
    } finally {
      await proxied.stop();
    }
  });

  it('counts an IPv4-mapped IPv6 peer as its IPv4 address', async () => {
    expect(normalizeIp('::ffff:203.0.113.7')).to.equal('203.0.113.7');
    expect(normalizeIp('::FFFF:127.0.0.1')).to.equal('127.0.0.1');
    expect(normalizeIp('2001:db8::1')).to.equal('2001:db8::1');
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Dual stack', allowed_ips: ['127.0.0.1'] });
    const dualStack = await startInstance(harness.database.url, { HOST: '::' });
    try {
      const { port } = dualStack.server.address() as { port: number };
      // A dual-stack socket sees this IPv4 client as ::ffff:127.0.0.1.
      const response = await call('GET', '/account', { auth: key.plain_key, baseUrl: `http://127.0.0.1:${port}/api/v1` });
      expect(response.status).to.equal(200);
    } finally {
      await dualStack.stop();
    }
  });
});

describe('rate limits', () => {
  it("answers 429 past the key's requests per minute, with Retry-After and the IETF RateLimit headers", async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Slow', rate_limit: 3 });
    const remaining = [];
    for (let i = 0; i < 3; i++) {
      const response = await call('GET', '/account', { auth: key.plain_key });
      expect(response.status).to.equal(200);
      expect(response.headers.get('ratelimit-policy')).to.equal('"default";q=3;w=60');
      remaining.push(/r=(\d+)/.exec(response.headers.get('ratelimit') ?? '')?.[1]);
    }
    expect(remaining).to.deep.equal(['2', '1', '0']);
    const limited = await call('GET', '/account', { auth: key.plain_key });
    expectError(limited, 429, 'rate_limit_exceeded');
    expect(limited.body.error.type).to.equal('rate_limit_error');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).to.be.within(1, 60);
    expect(limited.headers.get('ratelimit')).to.match(new RegExp(`^"default";r=0;t=${retryAfter}$`));
  });

  it('gives a key 600 requests per minute when no limit was set', async () => {
    const tenant = await createTenant();
    const response = await call('GET', '/account', { auth: tenant.key });
    expect(response.headers.get('ratelimit-policy')).to.equal('"default";q=600;w=60');
  });

  it('holds exactly across two Dispatch processes sharing one database', async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Shared', rate_limit: 10 });
    const second = await startInstance(harness.database.url);
    try {
      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => call('GET', '/account', { auth: key.plain_key, baseUrl: i % 2 ? second.baseUrl : harness.baseUrl })),
      );
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(10);
      expect(statuses.filter((s) => s === 429)).to.have.length(20);
    } finally {
      await second.stop();
    }
  });

  it('keeps separate counts for separate keys', async () => {
    const tenant = await createTenant();
    const first = await createAdminKey(tenant.accountId, { name: 'One', rate_limit: 1 });
    const second = await createAdminKey(tenant.accountId, { name: 'Two', rate_limit: 1 });
    expect((await call('GET', '/account', { auth: first.plain_key })).status).to.equal(200);
    expect((await call('GET', '/account', { auth: second.plain_key })).status).to.equal(200);
  });
});

describe('every operation', () => {
  const operations = documentedOperations();

  for (const operation of operations.filter((op) => !op.admin)) {
    it(`${operation.operationId} answers 429 once the key's rate limit is spent`, async () => {
      const tenant = await createTenant();
      const key = await createAdminKey(tenant.accountId, { name: 'One a minute', rate_limit: 1 });
      await call('GET', '/account', { auth: key.plain_key });
      expectError(await call(operation.method, operation.path, { auth: key.plain_key, body: operation.hasBody ? {} : undefined }), 429, 'rate_limit_exceeded');
    });
  }

  for (const operation of operations.filter((op) => op.hasBody)) {
    it(`${operation.operationId} answers 415 to a body that is not JSON`, async () => {
      const response = await call(operation.method, operation.path, {
        auth: 'admin',
        rawBody: 'to=+447700900123',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(response, 415, 'unsupported_media_type');
    });

    it(`${operation.operationId} answers 413 to a body over 256 KiB`, async () => {
      const response = await call(operation.method, operation.path, { auth: 'admin', rawBody: JSON.stringify({ name: 'x'.repeat(300 * 1024) }) });
      expectError(response, 413, 'payload_too_large');
    });
  }
});
