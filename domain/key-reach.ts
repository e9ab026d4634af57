import type { ApiKeyRow } from '../db/api-keys.ts';

/** What a key lets its holder do: the fields on which one key is compared with another. */
export type KeyGrant = Pick<ApiKeyRow, 'permissions' | 'rate_limit' | 'daily_limit' | 'monthly_limit' | 'allowed_ips' | 'expires_at'>;

/** Where a key reaches beyond another: the field (as a request parameter) and why, in words. */
export interface Overreach {
  param: string;
  reason: string;
  details?: Record<string, unknown>;
}

/** An IPv4 address or CIDR entry as the inclusive range of 32-bit addresses it covers. */
function rangeOf(entry: string): [number, number] {
  const [address, prefix = '32'] = entry.split('/');
  const value = address.split('.').reduce((sum, octet) => sum * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(prefix));
  const start = value - (value % size);
  return [start, start + size - 1];
}

/** True when every address of `entry` is on the allowlist `holder` (its entries together, not one alone). */
function isCovered(entry: string, holder: string[]): boolean {
  const ranges = holder.map(rangeOf);
  const [start, end] = rangeOf(entry);
  let next = start;
  for (;;) {
    const covering = ranges.find(([from, to]) => from <= next && next <= to);
    if (!covering) return false;
    if (covering[1] >= end) return true;
    next = covering[1] + 1;
  }
}

/** A cap that `null` lifts: within when the holder has none, or when the grant has one no higher. */
const capExceeds = (grant: number | null, holder: number | null) => holder !== null && (grant === null || grant > holder);

const shown = (cap: number | null) => (cap === null ? 'none' : String(cap));

/**
 * The first way `grant` is broader than `holder`, or null when it stays within: scopes a subset,
 * rate and message limits no higher, expiry no later, every allowed address inside the holder's
 * allowlist. A missing limit, expiry or allowlist is the broadest value of each.
 */
export function overreach(grant: KeyGrant, holder: KeyGrant): Overreach | null {
  const scopes = grant.permissions.filter((scope) => !holder.permissions.includes(scope));
  if (scopes.length > 0) return { param: 'permissions', reason: `it does not hold ${scopes.join(', ')}`, details: { scopes } };
  if (grant.rate_limit > holder.rate_limit) return { param: 'rate_limit', reason: `rate_limit ${grant.rate_limit} is above its own ${holder.rate_limit}` };
  for (const field of ['daily_limit', 'monthly_limit'] as const) {
    if (capExceeds(grant[field], holder[field])) return { param: field, reason: `${field} ${shown(grant[field])} is above its own ${shown(holder[field])}` };
  }
  if (holder.expires_at !== null && (grant.expires_at === null || grant.expires_at > holder.expires_at)) {
    return { param: 'expires_at', reason: `expires_at ${grant.expires_at?.toISOString() ?? 'never'} is later than its own ${holder.expires_at.toISOString()}` };
  }
  if (holder.allowed_ips !== null) {
    if (grant.allowed_ips === null) return { param: 'allowed_ips', reason: 'allowed_ips any address is outside its own allowlist' };
    const outside = grant.allowed_ips.findIndex((entry) => !isCovered(entry, holder.allowed_ips as string[]));
    if (outside >= 0) return { param: `allowed_ips[${outside}]`, reason: `allowed_ips entry ${grant.allowed_ips[outside]} is outside its own allowlist` };
  }
  return null;
}
