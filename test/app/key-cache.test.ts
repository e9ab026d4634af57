import { expect } from 'chai';
import pg from 'pg';
import { KeyCache, startKeyCache } from '../../app/key-cache.ts';
import { createLogger } from '../../app/logger.ts';
import type { Dispatch } from '../../app/server.ts';
import { setAccountStatus } from '../../db/accounts.ts';
import { findKeyByHash, revokeKey, type KeyWithAccount } from '../../db/api-keys.ts';
import { AUTH_CHANGES_CHANNEL, listenForAuthChanges } from '../../db/auth-changes.ts';
import { creditAccount } from '../../domain/accounts.ts';
import { hashSecret } from '../../domain/api-key-secret.ts';
import { call, expectError } from '../support/client.ts';
import { createTenant, eventually, type Tenant } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';

/** Long enough that within a test only an announcement, never the time limit, can refresh an entry. */
const AN_HOUR = 3_600_000;

/** The backends listening for changes on the run's database: a test's own, and those of the running Dispatch processes. */
const listeningBackends = (): Promise<number[]> =>
  harness.db('pg_stat_activity').where({ application_name: 'dispatch-auth-changes', datname: harness.database.name }).pluck('pid');

/** The real lookup, counted; after reading, each waits for the promise that `gate()` returns at that moment. */
function countedLoader(gate?: () => Promise<void>) {
  const loader = Object.assign(
    async (hash: Buffer): Promise<KeyWithAccount | undefined> => {
      loader.loads++;
      const found = await findKeyByHash(harness.db, hash);
      await gate?.();
      return found;
    },
    { loads: 0 },
  );
  return loader;
}

describe('the key cache', () => {
  let tenant: Tenant;
  let hash: Buffer;

  beforeEach(async () => {
    tenant = await createTenant();
    hash = hashSecret(tenant.key);
  });

  it('reads a key once for concurrent requests, and again once its time is up', async () => {
    const loader = countedLoader();
    let now = 0;
    const cache = new KeyCache(loader, 50, () => now);
    const found = await Promise.all(Array.from({ length: 10 }, () => cache.find(hash)));
    expect(found.map((f) => f?.key.id)).to.deep.equal(Array(10).fill(tenant.keyId));
    now = 39;
    await cache.find(hash);
    expect(loader.loads).to.equal(1);
    now = 50;
    await cache.find(hash);
    expect(loader.loads).to.equal(2);
  });

  it('reads a key in use again before its time is up, answering meanwhile from the entry', async () => {
    let hold = Promise.resolve();
    const loader = countedLoader(() => hold);
    let now = 0;
    const cache = new KeyCache(loader, 50, () => now);
    await cache.find(hash);
    await harness.db('api_keys').where({ id: tenant.keyId }).update({ name: 'Renamed' });
    let release = () => {};
    hold = new Promise((resolve) => (release = resolve));
    now = 41;
    // In the entry's last fifth: answered from it at once, and read again behind it, once.
    expect((await cache.find(hash))?.key.name).to.not.equal('Renamed');
    expect((await cache.find(hash))?.key.name).to.not.equal('Renamed');
    expect(loader.loads).to.equal(2);
    release();
    await eventually(
      () => cache.find(hash),
      (found) => found?.key.name === 'Renamed',
      { what: 'the refreshed entry' },
    );
    // The refreshed entry lasts its own time from when it was read (41 + 50), the first one would not have.
    now = 80;
    expect((await cache.find(hash))?.key.name).to.equal('Renamed');
    expect(loader.loads).to.equal(2);
  });

  it('forgets, when a refresh finds it gone, a key deleted meanwhile', async () => {
    const loader = countedLoader();
    let now = 0;
    const cache = new KeyCache(loader, 50, () => now);
    await cache.find(hash);
    await harness.db('api_keys').where({ id: tenant.keyId }).delete();
    now = 45;
    expect((await cache.find(hash))?.key.id).to.equal(tenant.keyId);
    // Still within the first entry's time: only the refresh can have forgotten it.
    await eventually(
      () => cache.find(hash),
      (found) => found === undefined,
      { what: 'the deleted key to be forgotten' },
    );
  });

  it('does not remember a row read before a change to its account was announced', async () => {
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    const loader = countedLoader(() => opened);
    const cache = new KeyCache(loader, AN_HOUR);
    const reading = cache.find(hash);
    cache.forgetAccount(tenant.accountId);
    open();
    expect((await reading)?.key.id).to.equal(tenant.keyId);
    await cache.find(hash);
    expect(loader.loads).to.equal(2);
  });

  it('does not remember an unknown key, so that a key created later works at once', async () => {
    const loader = countedLoader();
    const cache = new KeyCache(loader, AN_HOUR);
    const unknown = hashSecret(`${tenant.key.slice(0, -2)}zz`);
    expect(await cache.find(unknown)).to.equal(undefined);
    expect(await cache.find(unknown)).to.equal(undefined);
    expect(loader.loads).to.equal(2);
  });
});

describe('the key cache, kept current by the database', () => {
  let tenant: Tenant;
  let hash: Buffer;
  let running: Awaited<ReturnType<typeof startKeyCache>>;
  let listener: number;

  beforeEach(async () => {
    tenant = await createTenant();
    hash = hashSecret(tenant.key);
    const others = await listeningBackends();
    running = await startKeyCache(harness.db, harness.database.url, createLogger('silent'), { ttlMs: AN_HOUR, retryMs: 50 });
    [listener] = (await listeningBackends()).filter((pid) => !others.includes(pid));
    expect((await running.cache.find(hash))?.key.revoked_at).to.equal(null);
  });

  afterEach(() => running.stop());

  const cached = () => running.cache.find(hash) as Promise<KeyWithAccount>;

  it('drops a revoked key on the announcement, long before its time is up', async () => {
    await revokeKey(harness.db, tenant.accountId, tenant.keyId);
    await eventually(cached, (found) => found.key.revoked_at !== null, { what: 'the revocation' });
  });

  it('drops the keys of a suspended account on the announcement', async () => {
    await setAccountStatus(harness.db, tenant.accountId, 'suspended');
    await eventually(cached, (found) => found.account.status === 'suspended', { what: 'the suspension' });
  });

  it('drops a key whose grant was changed in SQL by hand, on the announcement', async () => {
    await harness
      .db('api_keys')
      .where({ id: tenant.keyId })
      .update({ permissions: ['sms:read'] });
    await eventually(cached, (found) => found.key.permissions.length === 1, { what: 'the new permissions' });
  });

  it('forgets everything when its connection is lost', async () => {
    // A key's last use is not announced: only the lost connection can make the cache read it again.
    await harness.db('api_keys').where({ id: tenant.keyId }).update({ last_used_at: new Date() });
    await harness.db.raw('SELECT pg_terminate_backend(?)', [listener]);
    await eventually(cached, (found) => found.key.last_used_at !== null, { what: 'the cache to be cleared' });
  });
});

describe('the listener for key and account changes', () => {
  it('reports a lost connection once, listens again, and hears the changes made after', async () => {
    const events: string[] = [];
    const others = await listeningBackends();
    const running = await listenForAuthChanges(
      harness.database.url,
      { onChange: (accountId) => events.push(`change ${accountId}`), onReset: () => events.push('reset'), onLost: () => events.push('lost') },
      50,
    );
    try {
      expect(events).to.deep.equal(['reset']);
      const [own] = (await listeningBackends()).filter((pid) => !others.includes(pid));
      await harness.db.raw('SELECT pg_terminate_backend(?)', [own]);
      await eventually(
        () => events.length,
        (count) => count === 4,
        { what: 'the loss and the new connection' },
      );
      expect(events).to.deep.equal(['reset', 'reset', 'lost', 'reset']);
      const tenant = await createTenant();
      await setAccountStatus(harness.db, tenant.accountId, 'closed');
      await eventually(
        () => events,
        (seen) => seen.includes(`change ${tenant.accountId}`),
        { what: 'the change' },
      );
    } finally {
      await running.stop();
    }
  });
});

describe('the announcements of changes that authentication reads', () => {
  let listener: pg.Client;
  const heard: string[] = [];

  before(async () => {
    listener = new pg.Client({ connectionString: harness.database.url });
    await listener.connect();
    listener.on('notification', ({ payload }) => heard.push(payload as string));
    await listener.query(`LISTEN ${AUTH_CHANGES_CHANNEL}`);
  });

  after(() => listener.end());

  it('leave out balances and last uses, which change with every send and request', async () => {
    const quiet = await createTenant();
    const loud = await createTenant();
    await creditAccount(harness.db, quiet.accountId, 5);
    await harness.db('api_keys').where({ id: quiet.keyId }).update({ last_used_at: new Date() });
    await setAccountStatus(harness.db, loud.accountId, 'closed');
    // Announcements arrive in commit order: once the last one is heard, the earlier ones would have been.
    await eventually(
      () => heard,
      (ids) => ids.includes(loud.accountId),
      { what: 'the closing' },
    );
    expect(heard).to.not.include(quiet.accountId);
  });

  it('cover every other column of accounts and api_keys', async () => {
    const { rows } = await harness.db.raw(`
      SELECT c.relname AS table, a.attname AS column
      FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE c.relname IN ('accounts', 'api_keys') AND a.attnum > 0 AND NOT a.attisdropped
        AND NOT EXISTS (
          SELECT 1 FROM pg_trigger t
          WHERE t.tgrelid = c.oid AND t.tgname = c.relname || '_announce_auth_change' AND a.attnum = ANY (t.tgattr::int2[])
        )`);
    // Read fresh where they are shown (GET /account, GET /balance), never from the cache; sends
    // read smart_encoding and send_window in their own transaction (db/send-checks.ts).
    expect(rows).to.have.deep.members([
      { table: 'accounts', column: 'balance' },
      { table: 'accounts', column: 'low_balance_threshold' },
      { table: 'accounts', column: 'smart_encoding' },
      { table: 'accounts', column: 'send_window' },
      { table: 'api_keys', column: 'last_used_at' },
    ]);
  });
});

describe('two Dispatch processes sharing a database', function () {
  // A second Dispatch, with its queues and workers, can take long to start on a busy machine.
  this.timeout(60_000);
  let second: Dispatch;

  before(async () => {
    second = await startInstance(harness.database.url);
  });

  after(() => second?.stop());

  /** The key works on both processes, so that each holds it in its cache. */
  async function usedOnBoth(key: string): Promise<void> {
    for (const baseUrl of [harness.baseUrl, second.baseUrl]) expect((await call('GET', '/account', { auth: key, baseUrl })).status).to.equal(200);
  }

  it('refuses on the other process a key revoked through one', async () => {
    const tenant = await createTenant();
    const spare = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Spare', permissions: ['keys:write', 'account:read'] } });
    await usedOnBoth(spare.body.data.plain_key);
    expect((await call('DELETE', `/api-keys/${spare.body.data.id}`, { auth: tenant.key })).status).to.equal(200);
    expectError(await call('GET', '/account', { auth: spare.body.data.plain_key }), 401, 'unauthorized');
    const refused = await eventually(
      () => call('GET', '/account', { auth: spare.body.data.plain_key, baseUrl: second.baseUrl }),
      (response) => response.status !== 200,
      { what: 'the second process to refuse the revoked key' },
    );
    expectError(refused, 401, 'unauthorized');
  });

  it('refuses, on both processes, the key of an account suspended meanwhile', async () => {
    const tenant = await createTenant();
    await usedOnBoth(tenant.key);
    await setAccountStatus(harness.db, tenant.accountId, 'suspended');
    const refusals = await Promise.all(
      [harness.baseUrl, second.baseUrl].map((baseUrl) =>
        eventually(
          () => call('GET', '/account', { auth: tenant.key, baseUrl }),
          (response) => response.status !== 200,
          {
            what: `${baseUrl} to refuse the suspended account's key`,
          },
        ),
      ),
    );
    for (const refused of refusals) {
      expectError(refused, 403, 'forbidden');
      expect(refused.body.error.details).to.deep.include({ reason: 'account_inactive' });
    }
  });
});
