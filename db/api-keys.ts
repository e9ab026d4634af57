import type { Knex } from 'knex';
import type { AccountRow } from './accounts.ts';
import { pooledBatcher, runPrepared } from './statements.ts';

export interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  key_hash: Buffer;
  key_hint: string;
  permissions: string[];
  rate_limit: number;
  daily_limit: number | null;
  monthly_limit: number | null;
  allowed_ips: string[] | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

export type NewApiKey = Omit<ApiKeyRow, 'revoked_at' | 'last_used_at' | 'created_at'>;

export async function insertApiKey(db: Knex, key: NewApiKey): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow>('api_keys').insert(key).returning('*');
  return row;
}

export interface KeyWithAccount {
  key: ApiKeyRow;
  account: AccountRow;
}

const FIND_KEYS = `
  SELECT k.id, k.account_id, k.name, k.key_hash, k.key_hint, k.permissions, k.rate_limit, k.daily_limit, k.monthly_limit,
         k.allowed_ips, k.expires_at, k.revoked_at, k.last_used_at, k.created_at, to_jsonb(a.*) AS account
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
  WHERE k.key_hash = ANY ($1::bytea[])`;

// Looked up whenever a process's cached row of a key in use runs out: keys in use together share a statement.
const keyLookups = pooledBatcher(async (db, hashes: Buffer[]): Promise<(KeyWithAccount | undefined)[]> => {
  const rows = await runPrepared<ApiKeyRow & { account: Record<string, unknown> }>(db, { name: 'find-keys-by-hash', text: FIND_KEYS, values: [hashes] });
  const byHash = new Map(
    rows.map(({ account, ...key }) => [
      key.key_hash.toString('hex'),
      { key, account: { ...account, balance: String(account.balance), created_at: new Date(account.created_at as string) } as AccountRow },
    ]),
  );
  return hashes.map((hash) => byHash.get(hash.toString('hex')));
});

/** The key with this hash and its account, revoked or not (the caller decides what a revoked key answers), read on a connection of its own: never inside a transaction. */
export function findKeyByHash(db: Knex, keyHash: Buffer): Promise<KeyWithAccount | undefined> {
  return keyLookups(db).submit(keyHash);
}

export async function listKeysForAccount(db: Knex, accountId: string): Promise<ApiKeyRow[]> {
  return db<ApiKeyRow>('api_keys')
    .where({ account_id: accountId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
}

/** Revokes the key once; a repeat keeps the first revocation time. */
export async function revokeKey(db: Knex, accountId: string, id: string): Promise<boolean> {
  const updated = await db('api_keys')
    .where({ account_id: accountId, id })
    .update({ revoked_at: db.raw('coalesce(revoked_at, clock_timestamp())') });
  return updated > 0;
}

/** Writes a batch of last-use times in one statement; a time never moves backwards. */
export async function recordKeyUse(db: Knex, lastUse: Map<string, Date>): Promise<void> {
  if (lastUse.size === 0) return;
  await db.raw(
    `UPDATE api_keys SET last_used_at = greatest(last_used_at, u.used_at)
     FROM unnest(?::text[], ?::timestamptz[]) AS u(id, used_at) WHERE api_keys.id = u.id`,
    [[...lastUse.keys()], [...lastUse.values()].map((date) => date.toISOString())],
  );
}

export async function findKeyForAccount(db: Knex, accountId: string, id: string): Promise<ApiKeyRow | undefined> {
  return db<ApiKeyRow>('api_keys').where({ account_id: accountId, id }).first();
}
