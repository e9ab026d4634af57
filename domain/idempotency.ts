import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { findKeyOutcome, lockKey, storeKeyOutcome, type IdempotencyRow } from '../db/idempotency.ts';
import { ApiError, type ErrorType } from './errors.ts';

const EXPIRES_SECONDS = 24 * 60 * 60;

export interface Outcome<Data> {
  status: number;
  data: Data;
  replayed: boolean;
}

/** JSON with object keys sorted, so that the same request always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const requestFingerprint = (operation: string, body: unknown): string =>
  createHash('sha256')
    .update(`${operation}\n${canonical(body)}`)
    .digest('hex');

export const replayHeaders = { 'Idempotent-Replayed': 'true' };

/**
 * Stripe's idempotency: runs `operation` at most once per account and key. A repeat of the same
 * request answers the stored outcome (a success, or the 400/402 the operation's own rules
 * raised); a repeat while the first runs answers 409; the same key with another request answers
 * 422. The key is held by a lock of the operation's own transaction, and the outcome stored in
 * it: a request that fails otherwise, is cut by a database outage or dies with its process leaves
 * the key free at once, with nothing done.
 */
export async function idempotently<Data>(
  db: Knex,
  accountId: string,
  key: string | undefined,
  fingerprint: string,
  operation: (trx: Knex.Transaction) => Promise<{ status: number; data: Data }>,
): Promise<Outcome<Data>> {
  if (key === undefined) return { ...(await db.transaction(operation)), replayed: false };
  const outcome = await db.transaction(async (trx): Promise<Outcome<Data> | { refused: ApiError }> => {
    if (!(await lockKey(trx, accountId, key))) {
      throw new ApiError(409, 'invalid_request_error', 'idempotency_key_in_use', 'A request with this Idempotency-Key is still running; retry in a moment.', {
        param: 'Idempotency-Key',
      });
    }
    const row = await findKeyOutcome(trx, accountId, key, EXPIRES_SECONDS);
    if (row) return replay(row, fingerprint);
    const store = (status: number, body: unknown) =>
      storeKeyOutcome(trx, { account_id: accountId, key, request_hash: fingerprint, response_status: status, response_body: body });
    try {
      // A savepoint, so that a refusal of the operation's own rules undoes its writes and is stored in their place.
      const result = await trx.transaction((savepoint) => operation(savepoint));
      await store(result.status, result.data);
      return { ...result, replayed: false };
    } catch (error) {
      if (!(error instanceof ApiError && (error.status === 400 || error.status === 402))) throw error;
      await store(error.status, { type: error.type, code: error.code, message: error.message, param: error.param, details: error.details });
      return { refused: error };
    }
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome;
}

/** The stored outcome of the key, answered again; another request under it is refused. */
function replay<Data>(row: IdempotencyRow, fingerprint: string): Outcome<Data> {
  if (row.request_hash !== fingerprint) {
    throw new ApiError(422, 'invalid_request_error', 'idempotency_key_reused', 'This Idempotency-Key was used with a different request.', {
      param: 'Idempotency-Key',
    });
  }
  if ((row.response_status as number) >= 400) {
    const error = row.response_body as { type: ErrorType; code: string; message: string; param?: string; details?: Record<string, unknown> };
    throw new ApiError(row.response_status as number, error.type, error.code, error.message, {
      param: error.param,
      details: error.details,
      headers: replayHeaders,
    });
  }
  return { status: row.response_status as number, data: row.response_body as Data, replayed: true };
}
