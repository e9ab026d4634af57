import { BlockList, isIPv4 } from 'node:net';
import type { Knex } from 'knex';
import { insertApiKey, type ApiKeyRow } from '../db/api-keys.ts';
import { forbidden, invalidRequest } from './errors.ts';
import { generateApiKey, hashApiKey, keyHint } from './api-key-secret.ts';
import { newId } from './ids.ts';
import type { Scope } from './scopes.ts';

export const DEFAULT_RATE_LIMIT = 600;

export interface ApiKeyRequest {
  name: string;
  permissions?: Scope[];
  rate_limit?: number;
  daily_limit?: number | null;
  monthly_limit?: number | null;
  allowed_ips?: string[] | null;
  expires_at?: string | null;
}

/** Builds the allowlist of a key; entries are IPv4 addresses or IPv4 CIDR ranges. */
export function allowlistOf(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    if (prefix === undefined) list.addAddress(address, 'ipv4');
    else list.addSubnet(address, Number(prefix), 'ipv4');
  }
  return list;
}

function checkAllowlist(entries: string[]): void {
  entries.forEach((entry, index) => {
    const [address, prefix, extra] = entry.split('/');
    const prefixOk = prefix === undefined || (/^\d{1,2}$/.test(prefix) && Number(prefix) <= 32);
    if (!isIPv4(address) || !prefixOk || extra !== undefined) {
      throw invalidRequest(`allowed_ips[${index}]`, `'${entry}' is not an IPv4 address or CIDR range.`);
    }
  });
}

/**
 * Creates a key for an account. `grantable` is the set of scopes the creator may hand out (the
 * calling key's own scopes), or null for the operator, who may grant any.
 */
export async function createApiKey(
  db: Knex,
  accountId: string,
  request: ApiKeyRequest,
  defaults: Scope[],
  grantable: readonly string[] | null,
  now = new Date(),
): Promise<{ row: ApiKeyRow; plainKey: string }> {
  const permissions = request.permissions ?? defaults;
  const beyond = grantable === null ? [] : permissions.filter((scope) => !grantable.includes(scope));
  if (beyond.length > 0) {
    throw forbidden(`This key cannot grant scopes it does not hold: ${beyond.join(', ')}.`, 'forbidden', { scopes: beyond }, 'permissions');
  }
  if (request.expires_at && new Date(request.expires_at) <= now) throw invalidRequest('expires_at', 'expires_at must be in the future.');
  if (request.allowed_ips) checkAllowlist(request.allowed_ips);
  const plainKey = generateApiKey();
  const row = await insertApiKey(db, {
    id: newId('key'),
    account_id: accountId,
    name: request.name,
    key_hash: hashApiKey(plainKey),
    key_hint: keyHint(plainKey),
    permissions,
    rate_limit: request.rate_limit ?? DEFAULT_RATE_LIMIT,
    daily_limit: request.daily_limit ?? null,
    monthly_limit: request.monthly_limit ?? null,
    allowed_ips: request.allowed_ips ?? null,
    expires_at: request.expires_at ? new Date(request.expires_at) : null,
  });
  return { row, plainKey };
}

export const isKeyActive = (key: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now = new Date()): boolean =>
  key.revoked_at === null && (key.expires_at === null || key.expires_at > now);
