import type { Knex } from 'knex';

export interface IdempotencyRow {
  account_id: string;
  key: string;
  request_hash: string;
  response_status: number | null;
  response_body: unknown;
  created_at: Date;
}

/**
 * Claims a key for a request: inserts it as running, or answers the row already there. A row
 * older than `expiresSeconds`, or still running after `staleSeconds` (its request died: its
 * transaction rolled back), is taken over.
 */
export async function claimKey(db: Knex, accountId: string, key: string, requestHash: string, expiresSeconds: number, staleSeconds: number): Promise<{ claimed: true } | { claimed: false; row: IdempotencyRow }> {
  const result = await db.raw(
    `INSERT INTO idempotency_keys AS k (account_id, key, request_hash) VALUES (:accountId, :key, :requestHash)
     ON CONFLICT (account_id, key) DO UPDATE
       SET request_hash = excluded.request_hash, response_status = NULL, response_body = NULL, created_at = clock_timestamp()
       WHERE k.created_at < clock_timestamp() - make_interval(secs => :expiresSeconds)
          OR (k.response_status IS NULL AND k.created_at < clock_timestamp() - make_interval(secs => :staleSeconds))
     RETURNING k.account_id`,
    { accountId, key, requestHash, expiresSeconds, staleSeconds },
  );
  if (result.rows.length > 0) return { claimed: true };
  const row = await db<IdempotencyRow>('idempotency_keys').where({ account_id: accountId, key }).first();
  // The row may have been released between the two statements: claim again.
  if (!row) return claimKey(db, accountId, key, requestHash, expiresSeconds, staleSeconds);
  return { claimed: false, row };
}

export async function completeKey(db: Knex, accountId: string, key: string, status: number, body: unknown): Promise<void> {
  await db('idempotency_keys').where({ account_id: accountId, key }).update({ response_status: status, response_body: JSON.stringify(body) });
}

export async function releaseKey(db: Knex, accountId: string, key: string): Promise<void> {
  await db('idempotency_keys').where({ account_id: accountId, key }).whereNull('response_status').delete();
}
