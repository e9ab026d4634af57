import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Knex } from 'knex';
import { useOperatorToken, type OperatorRole } from '../db/operators.ts';
import { allowlistOf } from '../domain/api-keys.ts';
import { hashSecret, hashesEqual, isWellFormedApiKey, OPERATOR_TOKEN_PREFIX } from '../domain/api-key-secret.ts';
import { ROOT_OPERATOR, type Operator } from '../domain/audit.ts';
import { operatorOf, roleAllows } from '../domain/operators.ts';
import { ApiError, forbidden, tooManyRequests, unauthorized } from '../domain/errors.ts';
import type { AdminCaller, CustomerCaller } from '../handlers/types.ts';
import { clientIp } from './client-ip.ts';
import type { KeyCache } from './key-cache.ts';
import type { KeyUsageRecorder } from './key-usage.ts';
import { rateLimitHeaders, type KeyRateLimiter } from './rate-limit.ts';
import { requestLocals } from './request-locals.ts';

export interface AuthDependencies {
  keys: KeyCache;
  rateLimiter: KeyRateLimiter;
  keyUsage: KeyUsageRecorder;
  trustProxy: boolean;
  adminToken: string | undefined;
  /** Where operator tokens are looked up. */
  db: Knex;
}

function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : '';
}

/**
 * Who is calling and whether they may: 401 for a missing, unknown, revoked or expired key; 403
 * for an inactive account, an address off the allowlist or a missing scope; 429 past the key's
 * rate limit. The rate-limit headers go on every answer to an authenticated request. An
 * operation without a required scope (GET /api-keys/current alone: a contract test keeps it so)
 * skips only the scope check.
 */
export async function authenticateCustomer(deps: AuthDependencies, req: Request, res: Response, requiredScope: string | undefined): Promise<CustomerCaller> {
  const token = bearerToken(req);
  if (token === undefined) throw unauthorized('No API key provided. Send it as `Authorization: Bearer ds_live_...`.');
  if (!isWellFormedApiKey(token)) throw unauthorized('Invalid API key provided.');
  const hash = hashSecret(token);
  const found = await deps.keys.find(hash);
  if (!found || !hashesEqual(found.key.key_hash, hash) || found.key.revoked_at !== null) throw unauthorized('Invalid API key provided.');
  const { key, account } = found;
  // Known from here on, so that the request's log line names who was refused as well as who was served.
  const locals = requestLocals(res);
  locals.accountId = account.id;
  locals.apiKeyId = key.id;
  if (key.expires_at !== null && key.expires_at <= new Date()) throw unauthorized('This API key has expired.');
  if (account.status !== 'active') throw forbidden(`This account is ${account.status}.`, 'forbidden', { reason: 'account_inactive' });
  if (key.allowed_ips !== null) {
    const ip = clientIp(req, deps.trustProxy);
    if (!allowlistOf(key.allowed_ips).check(ip, 'ipv4'))
      throw forbidden(`Requests from ${ip} are not allowed for this API key.`, 'forbidden', { reason: 'ip_not_allowed' });
  }
  deps.keyUsage.touch(key.id);
  const outcome = await deps.rateLimiter.consume(key.id, key.rate_limit);
  const headers = rateLimitHeaders(outcome);
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (!outcome.allowed) {
    throw tooManyRequests('rate_limit_exceeded', `This key allows ${key.rate_limit} requests per minute.`, outcome.resetSeconds);
  }
  if (requiredScope !== undefined && !key.permissions.includes(requiredScope)) {
    throw forbidden(`This API key lacks the scope '${requiredScope}'.`, 'forbidden', { required_scope: requiredScope });
  }
  return { kind: 'customer', account, apiKey: key };
}

/**
 * After an operation that needs this scope succeeds, the caller's account may have a key fewer
 * (or a new one): this process must not answer its next request from the rows it holds, even
 * before the database's announcement of the change arrives. Other processes act on that.
 */
const CHANGES_KEYS = 'keys:write';

export function forgetChangedKeys(deps: AuthDependencies, caller: CustomerCaller | AdminCaller | undefined, requiredScope: unknown): void {
  if (caller?.kind === 'customer' && requiredScope === CHANGES_KEYS) deps.keys.forgetAccount(caller.account.id);
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();

/** GET /metrics: open without METRICS_TOKEN, else only to `Authorization: Bearer <METRICS_TOKEN>`. */
export function authenticateMetrics(metricsToken: string | undefined, req: Request): void {
  if (metricsToken === undefined) return;
  const token = bearerToken(req);
  if (!token || !hashesEqual(digest(token), digest(metricsToken))) {
    throw new ApiError(401, 'authentication_error', 'unauthorized', 'GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
}

/** Root (ADMIN_TOKEN, compared in constant time), a live operator's token, or nobody. */
async function adminOperator(db: Knex, adminToken: string, token: string): Promise<Operator | undefined> {
  if (hashesEqual(digest(token), digest(adminToken))) return ROOT_OPERATOR;
  if (!token.startsWith(OPERATOR_TOKEN_PREFIX)) return undefined;
  const hash = hashSecret(token);
  const row = await useOperatorToken(db, hash);
  return row && hashesEqual(row.token_hash, hash) ? operatorOf(row) : undefined;
}

/**
 * The operator: bearer ADMIN_TOKEN (root, every role) or an operator's own token. 401 for a
 * missing, unknown or revoked token, then 403 naming the role the operation requires when the
 * operator's role is below it. Without ADMIN_TOKEN the admin API is off, operators' tokens too.
 */
export async function authenticateAdmin(deps: AuthDependencies, req: Request, res: Response, requiredRole: OperatorRole): Promise<AdminCaller> {
  if (deps.adminToken === undefined) throw unauthorized('The admin API is disabled: set ADMIN_TOKEN to enable it.');
  const token = bearerToken(req);
  const operator = token ? await adminOperator(deps.db, deps.adminToken, token) : undefined;
  if (!operator) throw unauthorized('Invalid admin token.');
  // Known from here on, so that the request's log line names who was refused as well as who was served.
  requestLocals(res).operatorId = operator.id ?? ROOT_OPERATOR.name;
  if (!roleAllows(operator.role, requiredRole)) {
    throw forbidden(`The operator ${operator.name} has the role ${operator.role}; this operation requires ${requiredRole}.`, 'forbidden', {
      required_role: requiredRole,
    });
  }
  return { kind: 'admin', operator };
}
