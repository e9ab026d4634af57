import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { claimKey, completeKey, releaseKey } from '../db/idempotency.ts';
import { ApiError, type ErrorType } from './errors.ts';

const EXPIRES_SECONDS = 24 * 60 * 60;
// A claim still running this long belongs to a request that died; its transaction rolled back.
export const STALE_SECONDS = 120;

export interface Outcome<Data> {
  status: number;
  data: Data;
  replayed: boolean;
}

/** JSON with object keys sorted, so that the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const requestFingerprint = (operation: string, body: unknown): string => createHash('sha256').update(`${operation}\n${canonical(body)}`).digest('hex');

export const replayHeaders = { 'Idempotent-Replayed': 'true' };

/**
 * Stripe's idempotency: runs `operation` in a transaction at most once per account and key.
 * A repeat of the same request answers the stored outcome (a success, or the 400/402 the
 * operation's own rules raised); a repeat while the first runs answers 409; the same key with
 * another request answers 422. The outcome is stored in the operation's own transaction.
 */
export async function idempotently<Data>(
  db: Knex,
  accountId: string,
  key: string | undefined,
  fingerprint: string,
  operation: (trx: Knex.Transaction) => Promise<{ status: number; data: Data }>,
): Promise<Outcome<Data>> {
  if (key === undefined) return { ...(await db.transaction(operation)), replayed: false };
  const claim = await claimKey(db, accountId, key, fingerprint, EXPIRES_SECONDS, STALE_SECONDS);
  if (!claim.claimed) {
    const { row } = claim;
    if (row.request_hash !== fingerprint) {
      throw new ApiError(422, 'invalid_request_error', 'idempotency_key_reused', 'This Idempotency-Key was used with a different request.', { param: 'Idempotency-Key' });
    }
    if (row.response_status === null) {
      throw new ApiError(409, 'invalid_request_error', 'idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry in a moment.', { param: 'Idempotency-Key' });
    }
    if (row.response_status >= 400) {
      const error = row.response_body as { type: ErrorType; code: string; message: string; param?: string; details?: Record<string, unknown> };
      throw new ApiError(row.response_status, error.type, error.code, error.message, { param: error.param, details: error.details, headers: replayHeaders });
    }
    return { status: row.response_status, data: row.response_body as Data, replayed: true };
  }
  try {
    return await db.transaction(async (trx) => {
      const result = await operation(trx);
      await completeKey(trx, accountId, key, result.status, result.data);
      return { ...result, replayed: false };
    });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 400 || error.status === 402)) {
      await completeKey(db, accountId, key, error.status, { type: error.type, code: error.code, message: error.message, param: error.param, details: error.details });
    } else {
      await releaseKey(db, accountId, key);
    }
    throw error;
  }
}

