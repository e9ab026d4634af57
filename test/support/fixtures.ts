import { expect } from 'chai';
import { insertMessages, type NewMessage } from '../../db/messages.ts';
import { newId, randomBase62 } from '../../domain/ids.ts';
import { call } from './client.ts';
import { harness } from './harness.ts';

export interface Tenant {
  accountId: string;
  /** A key holding every scope. */
  key: string;
  keyId: string;
}

/** A new account through the admin API, with a balance and a key holding every scope. */
export async function createTenant(options: { balance?: number; currency?: string } = {}): Promise<Tenant> {
  const account = await call('POST', '/admin/accounts', {
    auth: 'admin',
    body: { email: `tenant-${randomBase62(12).toLowerCase()}@example.com`, name: 'Test tenant', balance: options.balance ?? 10, currency: options.currency ?? 'USD' },
  });
  expect(account.status, JSON.stringify(account.body)).to.equal(201);
  const key = await createAdminKey(account.body.data.id, { name: 'All scopes' });
  return { accountId: account.body.data.id, key: key.plain_key, keyId: key.id };
}

/** A key for an account through the admin API; `permissions` omitted grants every scope. */
export async function createAdminKey(accountId: string, body: Record<string, unknown>) {
  const response = await call('POST', `/admin/accounts/${accountId}/api-keys`, { auth: 'admin', body });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.data as { id: string; plain_key: string; permissions: string[] };
}

/**
 * Messages written straight into the table, with whatever status and time a test needs (the
 * send path makes them pending and now). Answers their ids.
 */
export async function storeMessages(tenant: Tenant, specs: (Partial<NewMessage> & { created_at?: Date | string })[]): Promise<string[]> {
  const rows = specs.map(({ created_at, ...spec }) => ({
    id: newId('msg'),
    account_id: tenant.accountId,
    api_key_id: tenant.keyId,
    to: '+14155550123',
    from: 'Dispatch',
    body: 'Hello',
    status: 'sent' as const,
    encoding: 'GSM-7' as const,
    segments: 1,
    cost: '0.0075',
    currency: 'USD',
    route_id: null,
    requested_route_id: null,
    error: null,
    reference: null,
    ...spec,
  }));
  await insertMessages(harness.db, rows);
  for (const [index, spec] of specs.entries()) {
    if (spec.created_at !== undefined) await harness.db('messages').where({ id: rows[index].id }).update({ created_at: spec.created_at });
  }
  return rows.map((row) => row.id);
}
