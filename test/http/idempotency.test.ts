import { expect } from 'chai';
import { connect } from '../../db/connection.ts';
import { lockKey } from '../../db/idempotency.ts';
import { requestFingerprint } from '../../domain/idempotency.ts';
import { call, expectError } from '../support/client.ts';
import { eventually, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';
const send = (key: string, idempotencyKey: string, body: Record<string, unknown> = { to: TO, from: 'Dispatch', body: 'Once' }) =>
  call('POST', '/messages/send', { auth: key, body, headers: { 'idempotency-key': idempotencyKey } });

describe('Idempotency-Key', () => {
  it('answers a repeat with the original response, without a second send or charge', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    const first = await send(tenant.key, 'order-1');
    const again = await send(tenant.key, 'order-1');
    expect(again.status).to.equal(201);
    expect(again.body.data).to.deep.equal(first.body.data);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(1);
    expect((await harness.db('accounts').where({ id: tenant.accountId }).first()).balance).to.equal('9.9900');
  });

  it('treats the same JSON with its fields in another order as the same request', async () => {
    const tenant = await sendingTenant();
    await send(tenant.key, 'order-2', { to: TO, from: 'Dispatch', body: 'Same' });
    expect((await send(tenant.key, 'order-2', { body: 'Same', from: 'Dispatch', to: TO })).headers.get('idempotent-replayed')).to.equal('true');
  });

  it('answers 422 to the same key with a different body', async () => {
    const tenant = await sendingTenant();
    await send(tenant.key, 'order-3');
    expectError(await send(tenant.key, 'order-3', { to: TO, from: 'Dispatch', body: 'Different' }), 422, 'idempotency_key_reused', 'Idempotency-Key');
  });

  it('sends exactly once under concurrent repeats: one 201, the rest 409 or the replayed 201', async () => {
    const tenant = await sendingTenant();
    const responses = await Promise.all(Array.from({ length: 8 }, () => send(tenant.key, 'order-4')));
    const created = responses.filter((r) => r.status === 201);
    expect(created.length).to.be.at.least(1);
    expect(new Set(created.map((r) => r.body.data.id)).size).to.equal(1);
    for (const response of responses.filter((r) => r.status !== 201)) expectError(response, 409, 'idempotency_key_in_use', 'Idempotency-Key');
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(1);
  });

  it('scopes keys to the account', async () => {
    const [a, b] = [await sendingTenant(), await sendingTenant()];
    const first = await send(a.key, 'shared-key');
    const second = await send(b.key, 'shared-key');
    expect(second.status).to.equal(201);
    expect(second.headers.get('idempotent-replayed')).to.equal(null);
    expect(second.body.data.id).to.not.equal(first.body.data.id);
  });

  it('replays a refusal of the send rules (402) rather than running again', async () => {
    const tenant = await sendingTenant({ balance: 0.001, routes: [{ price: 0.01 }] });
    expectError(await send(tenant.key, 'order-5'), 402, 'insufficient_balance');
    await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 5 } });
    const replayed = await send(tenant.key, 'order-5');
    expectError(replayed, 402, 'insufficient_balance');
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
  });

  it('does not keep a request-validation failure: the corrected request may reuse the key', async () => {
    const tenant = await sendingTenant();
    expectError(await send(tenant.key, 'order-6', { to: 'not-a-number', from: 'Dispatch', body: 'Hi' }), 400, 'parameter_invalid', 'to');
    expect((await send(tenant.key, 'order-6')).status).to.equal(201);
  });

  it('works for bulk sends too', async () => {
    const tenant = await sendingTenant();
    const body = { recipients: [TO, '+14155550124'], from: 'Dispatch', body: 'Bulk once' };
    const first = await call('POST', '/messages/bulk', { auth: tenant.key, body, headers: { 'idempotency-key': 'bulk-1' } });
    const again = await call('POST', '/messages/bulk', { auth: tenant.key, body, headers: { 'idempotency-key': 'bulk-1' } });
    expect(again.body.data).to.deep.equal(first.body.data);
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(2);
  });

  it('answers 409 while a request with the key is running elsewhere, for both send operations, and serves the key once it ends', async () => {
    const tenant = await sendingTenant();
    const single = { to: TO, from: 'Dispatch', body: 'In flight' };
    const bulk = { recipients: [TO], from: 'Dispatch', body: 'In flight' };
    // What a request still running in another process holds: the key's lock, in its transaction.
    const running = await harness.db.transaction();
    expect(await lockKey(running, tenant.accountId, 'running-1')).to.equal(true);
    expect(await lockKey(running, tenant.accountId, 'running-2')).to.equal(true);
    expectError(await send(tenant.key, 'running-1', single), 409, 'idempotency_key_in_use', 'Idempotency-Key');
    expectError(
      await call('POST', '/messages/bulk', { auth: tenant.key, body: bulk, headers: { 'idempotency-key': 'running-2' } }),
      409,
      'idempotency_key_in_use',
    );
    // It failed (rolled back): nothing was done, and the retry is served at once.
    await running.rollback();
    expect((await send(tenant.key, 'running-1', single)).status).to.equal(201);
    expect((await call('POST', '/messages/bulk', { auth: tenant.key, body: bulk, headers: { 'idempotency-key': 'running-2' } })).status).to.equal(201);
  });

  it('answers 422 to a bulk key reused with other recipients', async () => {
    const tenant = await sendingTenant();
    await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: [TO], from: 'Dispatch', body: 'Hi' },
      headers: { 'idempotency-key': 'bulk-2' },
    });
    expectError(
      await call('POST', '/messages/bulk', {
        auth: tenant.key,
        body: { recipients: ['+14155550124'], from: 'Dispatch', body: 'Hi' },
        headers: { 'idempotency-key': 'bulk-2' },
      }),
      422,
      'idempotency_key_reused',
    );
  });

  it('frees the key of a request whose process died or whose connection was cut, at once', async () => {
    const tenant = await sendingTenant();
    const body = { to: TO, from: 'Dispatch', body: 'Retry after a crash' };
    // The dying request's session, on a pool of its own that the test throws away.
    const ownPool = connect(harness.database.url, 1);
    const dying = await ownPool.transaction();
    try {
      expect(await lockKey(dying, tenant.accountId, 'crashed')).to.equal(true);
      const { rows } = await dying.raw('SELECT pg_backend_pid() AS pid');
      expectError(await send(tenant.key, 'crashed', body), 409, 'idempotency_key_in_use', 'Idempotency-Key');
      // Its session ends as a killed process's or a restarted database's does.
      await harness.db.raw('SELECT pg_terminate_backend(?)', [rows[0].pid]);
      await eventually(
        () => harness.db.raw('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ?', [rows[0].pid]),
        (found) => found.rows[0].n === 0,
        { what: 'the session gone' },
      );
    } finally {
      await dying.rollback().catch(() => undefined);
      await ownPool.destroy();
    }
    expect((await send(tenant.key, 'crashed', body)).status).to.equal(201);
  });

  it('ignores a claim an earlier version left without an outcome', async () => {
    const tenant = await sendingTenant();
    const body = { to: TO, from: 'Dispatch', body: 'After an upgrade' };
    await harness.db('idempotency_keys').insert({ account_id: tenant.accountId, key: 'legacy', request_hash: requestFingerprint('sendMessage', body) });
    expect((await send(tenant.key, 'legacy', body)).status).to.equal(201);
    expect((await send(tenant.key, 'legacy', body)).headers.get('idempotent-replayed')).to.equal('true');
  });

  it('answers 400 naming the header for a key over 255 characters', async () => {
    const tenant = await sendingTenant();
    expectError(await send(tenant.key, 'k'.repeat(256)), 400, 'parameter_invalid', 'Idempotency-Key');
  });
});
