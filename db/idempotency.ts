import type { Knex } from 'knex';

export interface IdempotencyRow {
  account_id: string;
  key: string;
  request_hash: string;
  response_status: number | null;
  response_body: unknown;
  created_at: Date;
}

/** The text whose hash names the key's advisory lock. */
export const keyLockName = (accountId: string, key: string): string => `idempotency ${accountId} ${key}`;

/**
 * Takes the key's lock for the rest of the transaction, unless another request holds it; answers
 * whether it was taken. The lock belongs to the database session: a request whose process died
 * or whose connection was cut (a database outage) holds it no longer.
 */
export async function lockKey(trx: Knex.Transaction, accountId: string, key: string): Promise<boolean> {
  const { rows } = await trx.raw<{ rows: { locked: boolean }[] }>('SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0)) AS locked', [
    keyLockName(accountId, key),
  ]);
  return rows[0].locked;
}

/**
 * The outcome stored for the key, unless it is older than `expiresSeconds`. Read after lockKey,
 * so that the outcome of a request that finished just before is seen. Rows without an outcome
 * were claims of an earlier version, and count as none.
 */
export async function findKeyOutcome(trx: Knex.Transaction, accountId: string, key: string, expiresSeconds: number): Promise<IdempotencyRow | undefined> {
  return trx<IdempotencyRow>('idempotency_keys')
    .where({ account_id: accountId, key })
    .whereNotNull('response_status')
    .andWhereRaw('created_at >= clock_timestamp() - make_interval(secs => ?)', [expiresSeconds])
    .first();
}

/** Stores the key's outcome, replacing an expired one. */
export async function storeKeyOutcome(
  trx: Knex.Transaction,
  row: Pick<IdempotencyRow, 'account_id' | 'key' | 'request_hash' | 'response_status' | 'response_body'>,
): Promise<void> {
  await trx.raw(
    `INSERT INTO idempotency_keys (account_id, key, request_hash, response_status, response_body) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (account_id, key) DO UPDATE
       SET request_hash = excluded.request_hash, response_status = excluded.response_status, response_body = excluded.response_body, created_at = clock_timestamp()`,
    [row.account_id, row.key, row.request_hash, row.response_status, JSON.stringify(row.response_body)],
  );
}
