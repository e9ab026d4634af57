import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call } from './client.ts';

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
