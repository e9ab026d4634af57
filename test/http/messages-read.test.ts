import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, storeMessages, type Tenant } from '../support/fixtures.ts';

async function store(tenant: Tenant, to: string, status: 'delivered' | 'failed', createdAt: string): Promise<string> {
  const error = status === 'failed' ? { type: 'provider_error' as const, code: 'provider_rejected', message: 'Rejected' } : null;
  const [id] = await storeMessages(tenant, [{ to, status, error, reference: 'order-1', created_at: createdAt }]);
  return id;
}

describe('GET /messages', () => {
  it('filters by status, recipient and creation time, newest first', async () => {
    const tenant = await createTenant();
    const a = await store(tenant, '+447700900001', 'delivered', '2026-01-01T00:00:00Z');
    const b = await store(tenant, '+447700900002', 'failed', '2026-02-01T00:00:00Z');
    const c = await store(tenant, '+447700900001', 'delivered', '2026-03-01T00:00:00Z');
    const ids = async (query: string) => (await call('GET', `/messages${query}`, { auth: tenant.key })).body.data.map((m: { id: string }) => m.id);
    expect(await ids('')).to.deep.equal([c, b, a]);
    expect(await ids('?status=delivered')).to.deep.equal([c, a]);
    expect(await ids('?to=%2B447700900001')).to.deep.equal([c, a]);
    expect(await ids('?created_after=2026-01-01T00:00:00Z')).to.deep.equal([c, b]);
    expect(await ids('?created_before=2026-03-01T00:00:00Z')).to.deep.equal([b, a]);
    expect(await ids('?limit=1&page=2')).to.deep.equal([b]);
  });

  it('answers 400 for an invalid filter', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/messages?created_after=yesterday', { auth: tenant.key }), 400, 'parameter_invalid', 'created_after');
    expectError(await call('GET', '/messages?status=lost', { auth: tenant.key }), 400, 'parameter_invalid', 'status');
  });
});

describe('GET /messages/{id}', () => {
  it('answers the message with its error and reference', async () => {
    const tenant = await createTenant();
    const id = await store(tenant, '+447700900003', 'failed', '2026-01-01T00:00:00Z');
    const response = await call('GET', `/messages/${id}`, { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.include({ id, object: 'message', status: 'failed', cost: 0.0075, reference: 'order-1', error: { type: 'provider_error', code: 'provider_rejected', message: 'Rejected' } });
  });

  it('answers 404 for an unknown message', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/messages/msg_000000000000000000000000', { auth: tenant.key }), 404, 'resource_not_found');
  });
});
