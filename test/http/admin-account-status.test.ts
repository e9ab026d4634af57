import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call, expectError } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { createTenant, eventually, sendingTenant, storeMessages, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { quietInstance, reconcileAll } from '../support/reconcile.ts';

const move = (accountId: string, verb: 'suspend' | 'close' | 'reactivate', reason = `ticket ${randomBase62(6)}`, baseUrl?: string) =>
  call('POST', `/admin/accounts/${accountId}/${verb}`, { auth: 'admin', baseUrl, body: { reason } });

/** The key's answer once the change has reached this process's key cache (within a second, by the contract). */
const accountAnswer = (tenant: Tenant, status: number) =>
  eventually(
    () => call('GET', '/account', { auth: tenant.key }),
    (response) => response.status === status,
    { timeoutMs: 2_000, what: `GET /account answering ${status}` },
  );

describe('POST /admin/accounts/{id}/suspend, /close, /reactivate', () => {
  it('suspends an active account: its keys answer 403 account_inactive, and work again once it is reactivated', async () => {
    const tenant = await createTenant();
    const suspended = await move(tenant.accountId, 'suspend');
    expect(suspended.status).to.equal(200);
    expect(suspended.body.data).to.include({ id: tenant.accountId, status: 'suspended' });
    const refused = await accountAnswer(tenant, 403);
    expectError(refused, 403, 'forbidden');
    expect(refused.body.error.details).to.deep.include({ reason: 'account_inactive' });

    const reactivated = await move(tenant.accountId, 'reactivate');
    expect(reactivated.status).to.equal(200);
    expect(reactivated.body.data).to.include({ status: 'active' });
    expect((await accountAnswer(tenant, 200)).body.data).to.include({ id: tenant.accountId, status: 'active' });
  });

  it('closes an active or a suspended account, for good: a closed account cannot be reactivated', async () => {
    const active = await createTenant();
    expect((await move(active.accountId, 'close')).body.data).to.include({ status: 'closed' });
    const suspended = await createTenant();
    await move(suspended.accountId, 'suspend');
    expect((await move(suspended.accountId, 'close')).body.data).to.include({ status: 'closed' });
    await accountAnswer(suspended, 403);

    const refused = await move(suspended.accountId, 'reactivate');
    expectError(refused, 409, 'invalid_state_transition');
    expect(refused.body.error.message).to.match(/final/);
    expect((await call('GET', `/admin/accounts/${suspended.accountId}`, { auth: 'admin' })).body.data.status).to.equal('closed');
  });

  const invalid: ['suspend' | 'close' | 'reactivate', ('suspend' | 'close')[], string][] = [
    ['suspend', ['suspend'], 'a suspended account'],
    ['suspend', ['close'], 'a closed account'],
    ['close', ['close'], 'a closed account'],
    ['reactivate', [], 'an active account'],
  ];
  for (const [verb, before, what] of invalid) {
    it(`answers 409 invalid_state_transition to ${verb} ${what}, and changes nothing`, async () => {
      const tenant = await createTenant();
      for (const earlier of before) expect((await move(tenant.accountId, earlier)).status).to.equal(200);
      const status = (await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.status;
      expectError(await move(tenant.accountId, verb), 409, 'invalid_state_transition');
      expect((await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.status).to.equal(status);
      const recorded = await harness
        .db('admin_audit_log')
        .where({ target_id: tenant.accountId, action: `account.${verb}` })
        .count({ n: '*' })
        .first();
      expect(Number(recorded?.n)).to.equal(before.filter((earlier) => earlier === verb).length);
    });
  }

  for (const verb of ['suspend', 'close', 'reactivate'] as const) {
    it(`${verb}: answers 404 for an unknown account, 401 without the admin token, 400 without a reason`, async () => {
      expectError(await move('acct_000000000000000000000000', verb), 404, 'resource_not_found');
      const tenant = await createTenant();
      expectError(await call('POST', `/admin/accounts/${tenant.accountId}/${verb}`, { body: { reason: 'x' } }), 401, 'unauthorized');
      expectError(await call('POST', `/admin/accounts/${tenant.accountId}/${verb}`, { auth: 'admin', body: {} }), 400, 'parameter_missing', 'reason');
      expectError(await move(tenant.accountId, verb, '   '), 400, 'parameter_invalid', 'reason');
      expectError(
        await call('POST', `/admin/accounts/${tenant.accountId}/${verb}`, { auth: 'admin', body: { reason: 'x', status: 'closed' } }),
        400,
        'parameter_unknown',
      );
      expect((await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.status).to.equal('active');
    });
  }
});

describe('the pending messages of an account that is not active', function () {
  // The job that found the account suspended retries with pg-boss's backoff (5 to 10 s at first).
  this.timeout(60_000);
  let provider: FakeHttpProvider;
  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
  let quiet: Awaited<ReturnType<typeof quietInstance>>;
  const db = () => quiet.dispatch.db;
  const jobOf = async (messageId: string) =>
    (await db().raw(`SELECT state, retry_count FROM pgboss.job WHERE name = 'send-message' AND data->'message_ids' @> to_jsonb(?::text)`, [messageId]))
      .rows as { state: string; retry_count: number }[];

  before(async () => {
    quiet = await quietInstance();
  });

  after(async () => {
    await quiet?.stop();
  });

  beforeEach(async () => {
    provider = await FakeHttpProvider.start();
  });

  afterEach(async () => {
    await provider.stop();
  });

  it('are not submitted while it is suspended, and go out once it is reactivated within the send window', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: provider.url } }], baseUrl: quiet.dispatch.baseUrl });
    provider.behave({ accept: true, id: 'after-reactivation' });
    const [id] = await storeMessages(tenant, [{ status: 'pending', cost: '0.0100', created_at: minutesAgo(2) }], db());
    expect((await move(tenant.accountId, 'suspend', undefined, quiet.dispatch.baseUrl)).status).to.equal(200);

    expect(await reconcileAll(quiet.dispatch)).to.be.at.least(1);
    // The job has run and answered "later": it waits to retry, and nothing reached the upstream.
    await eventually(
      () => jobOf(id),
      (jobs) => jobs.length === 1 && jobs[0].state === 'retry',
      { what: `the send job of ${id} waiting to retry` },
    );
    expect(provider.requests).to.have.length(0);
    const stored = await db()('messages').where({ id }).first();
    expect(stored).to.include({ status: 'pending', attempts: 0 });

    expect((await move(tenant.accountId, 'reactivate', undefined, quiet.dispatch.baseUrl)).status).to.equal(200);
    const sent = await waitForMessage(tenant, id, (message) => message.status !== 'pending', 40_000);
    expect(sent).to.include({ status: 'sent', provider_message_id: 'after-reactivation', attempts: 1 });
    expect(provider.requests).to.have.length(1);
  });

  it('fail with provider_unavailable and are refunded, never submitted, once the send window has passed', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: provider.url } }], baseUrl: quiet.dispatch.baseUrl });
    const [id] = await storeMessages(tenant, [{ status: 'pending', cost: '0.0100', created_at: minutesAgo(16) }], db());
    expect((await move(tenant.accountId, 'close', undefined, quiet.dispatch.baseUrl)).status).to.equal(200);
    await reconcileAll(quiet.dispatch);
    const failed = await eventually(
      () => db()('messages').where({ id }).first(),
      (message) => message.status !== 'pending',
      { what: `message ${id} leaving pending` },
    );
    expect(failed).to.include({ status: 'failed', cost: '0.0000' });
    expect(failed.error.code).to.equal('provider_unavailable');
    expect(provider.requests).to.have.length(0);
    expect(await db()('ledger_entries').where({ message_id: id, kind: 'refund' }).pluck('amount')).to.deep.equal(['0.0100']);
  });
});

describe('GET /admin/accounts', () => {
  it('lists accounts newest first, filtered by a case-insensitive part of the email or name, by email and by status, with an exact total', async () => {
    const tag = randomBase62(10).toLowerCase();
    const made = [];
    for (const [index, name] of ['Alpha', 'Beta', 'Gamma'].entries()) {
      const response = await call('POST', '/admin/accounts', { auth: 'admin', body: { email: `${tag}-${index}@example.com`, name: `${name} ${tag}` } });
      made.push(response.body.data.id);
    }
    await move(made[1], 'suspend');

    const all = await call('GET', `/admin/accounts?q=${tag.toUpperCase()}`, { auth: 'admin' });
    expect(all.status).to.equal(200);
    expect(all.body.data.map((account: { id: string }) => account.id)).to.deep.equal([...made].reverse());
    expect(all.body.pagination).to.include({ total: 3, page: 1, pages: 1, has_more: false });

    const byName = await call('GET', `/admin/accounts?q=${encodeURIComponent(`gamma ${tag}`)}`, { auth: 'admin' });
    expect(byName.body.data.map((account: { id: string }) => account.id)).to.deep.equal([made[2]]);
    const byEmail = await call('GET', `/admin/accounts?email=${tag.toUpperCase()}-0@EXAMPLE.COM`, { auth: 'admin' });
    expect(byEmail.body.data.map((account: { id: string }) => account.id)).to.deep.equal([made[0]]);
    const suspended = await call('GET', `/admin/accounts?q=${tag}&status=suspended`, { auth: 'admin' });
    expect(suspended.body.data.map((account: { id: string; status: string }) => [account.id, account.status])).to.deep.equal([[made[1], 'suspended']]);

    const paged = await call('GET', `/admin/accounts?q=${tag}&limit=2&page=2`, { auth: 'admin' });
    expect(paged.body.data.map((account: { id: string }) => account.id)).to.deep.equal([made[0]]);
    expect(paged.body.pagination).to.include({ total: 3, page: 2, limit: 2, pages: 2, has_more: false });
  });

  it('takes % and _ in q as themselves', async () => {
    const tag = randomBase62(10).toLowerCase();
    await call('POST', '/admin/accounts', { auth: 'admin', body: { email: `${tag}@example.com`, name: `Plain ${tag}` } });
    const response = await call('GET', `/admin/accounts?q=${encodeURIComponent(`${tag.slice(0, 3)}%${tag.slice(4)}`)}`, { auth: 'admin' });
    expect(response.body.data).to.have.length(0);
    expect(response.body.pagination.total).to.equal(0);
  });

  it('answers 400 for an unknown status or a page out of range, and 401 without the admin token', async () => {
    expectError(await call('GET', '/admin/accounts?status=frozen', { auth: 'admin' }), 400, 'parameter_invalid', 'status');
    expectError(await call('GET', '/admin/accounts?page=0', { auth: 'admin' }), 400, 'parameter_invalid', 'page');
    expectError(await call('GET', '/admin/accounts'), 401, 'unauthorized');
  });
});
