import { expect } from 'chai';
import { disableEndpoint } from '../../db/webhooks.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { call, expectError } from '../support/client.ts';
import { addRoute, approvedSender, createAdminKey, createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

interface Entry {
  id: string;
  action: string;
  target_type: string;
  target_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  reason: string | null;
  created_at: string;
}

/** The audit entries about one target, through the API (so that every answer is checked against the contract). */
async function entriesOf(targetId: string, action?: string): Promise<Entry[]> {
  const query = new URLSearchParams({ target_id: targetId, ...(action && { action }) });
  const response = await call('GET', `/admin/audit-log?${query.toString()}`, { auth: 'admin' });
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body.data;
}

/** Exactly one entry of this action about the target; answers it. */
async function onlyEntry(targetId: string, action: string, targetType: string): Promise<Entry> {
  const entries = await entriesOf(targetId, action);
  expect(entries, `${action} ${targetId}`).to.have.length(1);
  expect(entries[0]).to.include({ action, target_type: targetType, target_id: targetId });
  return entries[0];
}

describe('the admin audit log', () => {
  it('records an account opened, with no before and the account after', async () => {
    const tenant = await createTenant({ balance: 10 });
    const entry = await onlyEntry(tenant.accountId, 'account.create', 'account');
    expect(entry.before).to.equal(null);
    expect(entry.after).to.include({ id: tenant.accountId, status: 'active', balance: 10 });
    expect(entry.id).to.match(/^aud_[0-9A-Za-z]{24}$/);
  });

  it('records a credit with the balance before and after and its description as the reason', async () => {
    const tenant = await createTenant({ balance: 10 });
    expect(
      (await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 5.5, description: 'Invoice 42' } })).status,
    ).to.equal(200);
    const entry = await onlyEntry(tenant.accountId, 'account.credit', 'account');
    expect(entry.before).to.include({ balance: 10 });
    expect(entry.after).to.include({ balance: 15.5 });
    expect(entry.reason).to.equal('Invoice 42');
  });

  it('records a key created for an account, never its secret', async () => {
    const tenant = await createTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Audited' });
    const entry = await onlyEntry(key.id, 'api_key.create', 'api_key');
    expect(entry.before).to.equal(null);
    expect(entry.after).to.include({ id: key.id, name: 'Audited' });
    expect(entry.after).not.to.have.property('plain_key');
    const stored = await harness.db('admin_audit_log').where({ target_id: key.id }).first();
    expect(JSON.stringify(stored)).not.to.include(key.plain_key);
  });

  it('records a suspension, a reactivation and a closure with the status before and after and the reason', async () => {
    const tenant = await createTenant();
    for (const [verb, reason] of [
      ['suspend', 'Unpaid'],
      ['reactivate', 'Paid'],
      ['close', 'Leaving'],
    ]) {
      expect((await call('POST', `/admin/accounts/${tenant.accountId}/${verb}`, { auth: 'admin', body: { reason } })).status).to.equal(200);
    }
    const statuses = (entry: Entry) => [entry.before?.status, entry.after?.status, entry.reason];
    expect(statuses(await onlyEntry(tenant.accountId, 'account.suspend', 'account'))).to.deep.equal(['active', 'suspended', 'Unpaid']);
    expect(statuses(await onlyEntry(tenant.accountId, 'account.reactivate', 'account'))).to.deep.equal(['suspended', 'active', 'Paid']);
    expect(statuses(await onlyEntry(tenant.accountId, 'account.close', 'account'))).to.deep.equal(['active', 'closed', 'Leaving']);
  });

  it('records routes created and changed, less the inbound URL that carries their secret', async () => {
    const created = await call('POST', '/admin/routes', {
      auth: 'admin',
      body: {
        name: `audit-${randomBase62(8)}`,
        provider: 'http',
        config: { url: 'http://127.0.0.1:9/sms', token: 'upstream-secret' },
        price_per_segment: 0.01,
      },
    });
    const id = String(created.body.data.id);
    expect(created.body.data.inbound_url).to.be.a('string');
    expect((await call('PATCH', `/admin/routes/${id}`, { auth: 'admin', body: { price_per_segment: 0.02, is_active: false } })).status).to.equal(200);
    const creation = await onlyEntry(id, 'route.create', 'route');
    expect(creation.before).to.equal(null);
    expect(creation.after).to.include({ id: Number(id), price_per_segment: 0.01, is_active: true });
    const update = await onlyEntry(id, 'route.update', 'route');
    expect(update.before).to.include({ price_per_segment: 0.01, is_active: true });
    expect(update.after).to.include({ price_per_segment: 0.02, is_active: false });
    const stored = JSON.stringify(await harness.db('admin_audit_log').where({ target_id: id, target_type: 'route' }));
    expect(stored).not.to.include('upstream-secret');
    expect(stored).not.to.include(created.body.data.inbound_url);
  });

  it('records route assignments against their account: assigned, re-prioritised and unassigned', async () => {
    const tenant = await createTenant();
    const routeId = await addRoute(tenant.accountId, 3);
    expect((await call('PUT', `/admin/accounts/${tenant.accountId}/routes/${routeId}`, { auth: 'admin', body: { priority: 7 } })).status).to.equal(200);
    expect((await call('DELETE', `/admin/accounts/${tenant.accountId}/routes/${routeId}`, { auth: 'admin' })).status).to.equal(200);
    const assignments = (await entriesOf(tenant.accountId, 'route.assign')).map((entry) => [entry.before?.priority ?? null, entry.after?.priority]);
    expect(assignments).to.deep.equal([
      [3, 7],
      [null, 3],
    ]);
    const removal = await onlyEntry(tenant.accountId, 'route.unassign', 'account');
    expect(removal.before).to.include({ route_id: routeId, priority: 7 });
    expect(removal.after).to.equal(null);
  });

  it('records sender reviews with the status before and after, and nothing for a refused one', async () => {
    const tenant = await createTenant();
    await approvedSender(tenant, 'Audited');
    const [sender] = (await call('GET', '/senders', { auth: tenant.key })).body.data;
    expect((await call('POST', `/admin/senders/${sender.id}/suspend`, { auth: 'admin' })).status).to.equal(200);
    expectError(await call('POST', `/admin/senders/${sender.id}/reject`, { auth: 'admin' }), 409, 'invalid_state_transition');
    const approval = await onlyEntry(sender.id, 'sender.approve', 'sender');
    expect([approval.before?.status, approval.after?.status]).to.deep.equal(['pending', 'approved']);
    const suspension = await onlyEntry(sender.id, 'sender.suspend', 'sender');
    expect([suspension.before?.status, suspension.after?.status]).to.deep.equal(['approved', 'suspended']);
    expect(await entriesOf(sender.id, 'sender.reject')).to.have.length(0);

    const other = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Rejected' } });
    expect((await call('POST', `/admin/senders/${other.body.data.id}/reject`, { auth: 'admin' })).status).to.equal(200);
    const rejection = await onlyEntry(other.body.data.id, 'sender.reject', 'sender');
    expect([rejection.before?.status, rejection.after?.status]).to.deep.equal(['pending', 'rejected']);
  });

  it('records a number blocked and unblocked, with the entry before or after', async () => {
    const tenant = await createTenant();
    const number = `+4474001${String(Math.floor(Math.random() * 100_000)).padStart(5, '0')}`;
    const created = await call('POST', '/admin/blocklist', { auth: 'admin', body: { number, account_id: tenant.accountId, reason: 'Complaint' } });
    expect(created.status).to.equal(201);
    expect((await call('DELETE', `/admin/blocklist/${encodeURIComponent(number)}?account_id=${tenant.accountId}`, { auth: 'admin' })).status).to.equal(200);
    const block = await onlyEntry(created.body.data.id, 'blocklist.create', 'blocklist_entry');
    expect(block).to.include({ before: null, reason: 'Complaint' });
    expect(block.after).to.include({ number, account_id: tenant.accountId });
    const unblock = await onlyEntry(created.body.data.id, 'blocklist.delete', 'blocklist_entry');
    expect(unblock.before).to.include({ number, account_id: tenant.accountId });
    expect(unblock.after).to.equal(null);
  });

  it('records a webhook endpoint enabled again, inactive before and active after', async () => {
    const tenant = await createTenant();
    const endpoint = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: 'http://127.0.0.1:9/hooks' } });
    await disableEndpoint(harness.db, endpoint.body.data.id);
    expect((await call('POST', `/admin/webhooks/${endpoint.body.data.id}/enable`, { auth: 'admin' })).status).to.equal(200);
    const entry = await onlyEntry(endpoint.body.data.id, 'webhook_endpoint.enable', 'webhook_endpoint');
    expect(entry.before).to.include({ is_active: false });
    expect(entry.after).to.include({ is_active: true, failure_count: 0 });
    expect(entry.after).not.to.have.property('signing_secret');
  });

  it('records a simulated inbound message', async () => {
    const route = await call('POST', '/admin/routes', {
      auth: 'admin',
      body: { name: `audit-${randomBase62(8)}`, provider: 'simulator', config: { outcome: 'delivered' }, price_per_segment: 0.01 },
    });
    const received = await call('POST', `/admin/routes/${route.body.data.id}/inbound`, {
      auth: 'admin',
      body: { from: '+447911123456', to: '+12127000999', body: 'Hello' },
    });
    expect(received.status).to.equal(201);
    const entry = await onlyEntry(received.body.data.id, 'inbound_message.simulate', 'inbound_message');
    expect(entry.before).to.equal(null);
    expect(entry.after).to.include({ id: received.body.data.id, body: 'Hello' });
  });

  it('leaves no entry when the write fails', async () => {
    const tenant = await createTenant();
    const taken = (await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.email;
    const before = await harness.db('admin_audit_log').where({ action: 'account.create' }).count({ n: '*' }).first();
    expectError(await call('POST', '/admin/accounts', { auth: 'admin', body: { email: taken, name: 'Twin' } }), 409, 'conflict', 'email');
    expect(await harness.db('admin_audit_log').where({ action: 'account.create' }).count({ n: '*' }).first()).to.deep.equal(before);
  });
});

describe('GET /admin/audit-log', () => {
  it('lists newest first, narrowed by action, target type, target and a time window, with an exact total', async () => {
    const tenant = await createTenant();
    const start = new Date().toISOString();
    for (const amount of [1, 2, 3]) await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount } });
    const end = new Date(Date.now() + 1000).toISOString();

    const all = await call('GET', `/admin/audit-log?target_type=account&target_id=${tenant.accountId}`, { auth: 'admin' });
    expect(all.body.data.map((entry: Entry) => entry.action)).to.deep.equal(['account.credit', 'account.credit', 'account.credit', 'account.create']);
    expect(all.body.pagination).to.include({ total: 4 });

    const credits = await call('GET', `/admin/audit-log?action=account.credit&target_id=${tenant.accountId}&limit=2`, { auth: 'admin' });
    expect(credits.body.data.map((entry: Entry) => entry.after?.balance)).to.deep.equal([16, 13]);
    expect(credits.body.pagination).to.include({ total: 3, pages: 2, has_more: true });

    const window = await call(
      'GET',
      `/admin/audit-log?target_id=${tenant.accountId}&created_after=${encodeURIComponent(start)}&created_before=${encodeURIComponent(end)}`,
      { auth: 'admin' },
    );
    expect(window.body.data.map((entry: Entry) => entry.action)).to.deep.equal(['account.credit', 'account.credit', 'account.credit']);
    const none = await call('GET', `/admin/audit-log?target_id=${tenant.accountId}&target_type=route`, { auth: 'admin' });
    expect(none.body.pagination.total).to.equal(0);
  });

  it('answers 400 for a malformed time or a window that ends before it starts, and 401 without the admin token', async () => {
    expectError(await call('GET', '/admin/audit-log?created_after=yesterday', { auth: 'admin' }), 400, 'parameter_invalid', 'created_after');
    const later = '2025-11-22T00:00:00.000Z';
    const earlier = '2025-11-01T00:00:00.000Z';
    expectError(
      await call('GET', `/admin/audit-log?created_after=${later}&created_before=${earlier}`, { auth: 'admin' }),
      400,
      'parameter_invalid',
      'created_before',
    );
    expectError(await call('GET', '/admin/audit-log'), 401, 'unauthorized');
  });
});
