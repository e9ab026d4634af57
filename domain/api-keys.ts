import { BlockList, isIPv4 } from 'node:net';
import type { Knex } from 'knex';
import { findKeyForAccount, insertApiKey, revokeKey, type ApiKeyRow } from '../db/api-keys.ts';
import { forbidden, invalidRequest, notFound } from './errors.ts';
import { generateApiKey, hashSecret, keyHint } from './api-key-secret.ts';
import { newId } from './ids.ts';
import { overreach, type KeyGrant } from './key-reach.ts';
import type { Scope } from './scopes.ts';

export const DEFAULT_RATE_LIMIT = 600;

/** `details.reason` of a 403 for creating or revoking a key broader than the calling key. */
const BROADER = 'broader_than_calling_key';

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

/** `null` asked is an answer (no cap); only an omitted field takes the creator's value. */
const askedOrOwn = <T>(asked: T | null | undefined, own: T | null | undefined): T | null => (asked === undefined ? (own ?? null) : asked);

/**
 * The new key's grant. Omitted fields take the creator's own value, so that a restricted key
 * mints restricted keys by default; the rate limit takes the default 600, or the creator's own
 * when lower. Without a creator (the operator) omitted fields mean no cap.
 */
function grantOf(request: ApiKeyRequest, defaults: Scope[], creator: KeyGrant | null): KeyGrant {
  const expiresAt = request.expires_at == null ? request.expires_at : new Date(request.expires_at);
  return {
    permissions: request.permissions ?? defaults,
    rate_limit: request.rate_limit ?? Math.min(DEFAULT_RATE_LIMIT, creator?.rate_limit ?? DEFAULT_RATE_LIMIT),
    daily_limit: askedOrOwn(request.daily_limit, creator?.daily_limit),
    monthly_limit: askedOrOwn(request.monthly_limit, creator?.monthly_limit),
    allowed_ips: askedOrOwn(request.allowed_ips, creator?.allowed_ips),
    expires_at: askedOrOwn(expiresAt, creator?.expires_at),
  };
}

/**
 * Creates a key for an account. `creator` is the calling key, which may hand on no more than it
 * holds (403 naming the first field that reaches beyond it, never a silent clamp), or null for
 * the operator, who may grant anything.
 */
export async function createApiKey(
  db: Knex,
  accountId: string,
  request: ApiKeyRequest,
  defaults: Scope[],
  creator: KeyGrant | null,
  now = new Date(),
): Promise<{ row: ApiKeyRow; plainKey: string }> {
  if (request.expires_at && new Date(request.expires_at) <= now) throw invalidRequest('expires_at', 'expires_at must be in the future.');
  if (request.allowed_ips) checkAllowlist(request.allowed_ips);
  const grant = grantOf(request, defaults, creator);
  const beyond = creator === null ? null : overreach(grant, creator);
  if (beyond)
    throw forbidden(`A key cannot create a key broader than itself: ${beyond.reason}.`, 'forbidden', { reason: BROADER, ...beyond.details }, beyond.param);
  const plainKey = generateApiKey();
  const row = await insertApiKey(db, {
    id: newId('key'),
    account_id: accountId,
    name: request.name,
    key_hash: hashSecret(plainKey),
    key_hint: keyHint(plainKey),
    ...grant,
  });
  return { row, plainKey };
}

/**
 * Revokes a key of the account on behalf of `revoker`, which may revoke only keys no broader
 * than itself (itself included), so that a narrow key cannot lock the account out of its main key.
 */
export async function revokeApiKey(db: Knex, accountId: string, id: string, revoker: KeyGrant): Promise<void> {
  const target = await findKeyForAccount(db, accountId, id);
  if (!target) throw notFound('api_key', id);
  const beyond = overreach(target, revoker);
  if (beyond) throw forbidden(`A key cannot revoke a key broader than itself: ${beyond.reason}.`, 'forbidden', { reason: BROADER, field: beyond.param }, 'id');
  await revokeKey(db, accountId, id);
}

export const isKeyActive = (key: Pick<ApiKeyRow, 'revoked_at' | 'expires_at'>, now = new Date()): boolean =>
  key.revoked_at === null && (key.expires_at === null || key.expires_at > now);
