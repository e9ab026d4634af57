import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type OptOutSource = 'keyword' | 'api' | 'operator';

export interface OptOutRow {
  id: string;
  account_id: string;
  number: string;
  source: OptOutSource;
  reason: string | null;
  keyword: string | null;
  created_at: Date;
}

export interface OptOutChange {
  source: OptOutSource;
  reason?: string | null;
  keyword?: string | null;
}

/**
 * Takes the exclusive advisory locks that order opt-outs of these numbers after the sends to
 * them in flight (opt_out_lock_keys, in the migrations, defines the keys and their order). Its
 * own statement, before the write, held to the commit.
 */
export async function lockNumbersExclusively(trx: Knex.Transaction, accountId: string, numbers: string[]): Promise<void> {
  if (numbers.length === 0) return;
  await trx.raw('SELECT count(pg_advisory_xact_lock(k)) FROM opt_out_lock_keys(?, ?::text[]) AS k', [accountId, numbers]);
}

/**
 * Opts these numbers out, recording a change for each one that was not already: one statement
 * for any count. Answers the rows it inserted.
 */
export async function insertOptOuts(db: Knex, accountId: string, numbers: string[], change: OptOutChange): Promise<OptOutRow[]> {
  if (numbers.length === 0) return [];
  const result = await db.raw<{ rows: OptOutRow[] }>(
    `WITH inserted AS (
       INSERT INTO opt_outs (account_id, number, source, reason, keyword)
       SELECT :accountId, n, :source, :reason, :keyword FROM unnest(:numbers::text[]) WITH ORDINALITY AS given (n, position) ORDER BY position
       ON CONFLICT (account_id, number) DO NOTHING
       RETURNING *),
     recorded AS (
       INSERT INTO opt_out_changes (account_id, number, change, source, reason, keyword, created_at)
       SELECT account_id, number, 'opt_out', source, reason, keyword, created_at FROM inserted ORDER BY id)
     SELECT * FROM inserted ORDER BY id`,
    { accountId, numbers: [...new Set(numbers)], source: change.source, reason: change.reason ?? null, keyword: change.keyword ?? null },
  );
  return result.rows;
}

/**
 * Removes the number's opt-out, when there is one (of `onlySource` only, when given), and records
 * the opt-in in the same statement. Answers the removed row.
 */
export async function deleteOptOut(
  db: Knex,
  accountId: string,
  number: string,
  change: OptOutChange,
  onlySource?: OptOutSource,
): Promise<OptOutRow | undefined> {
  const result = await db.raw<{ rows: OptOutRow[] }>(
    `WITH removed AS (
       DELETE FROM opt_outs WHERE account_id = :accountId AND number = :number AND (:onlySource::text IS NULL OR source = :onlySource)
       RETURNING *),
     recorded AS (
       INSERT INTO opt_out_changes (account_id, number, change, source, reason, keyword)
       SELECT account_id, number, 'opt_in', :source, :reason, :keyword FROM removed)
     SELECT * FROM removed`,
    { accountId, number, onlySource: onlySource ?? null, source: change.source, reason: change.reason ?? null, keyword: change.keyword ?? null },
  );
  return result.rows[0];
}

/** A page of opt-outs, newest first: one account's, or (accountId null) every account's. */
export async function listOptOuts(db: Knex, accountId: string | null, filter: { number?: string }, page: PageRequest): Promise<Page<OptOutRow>> {
  const query = db<OptOutRow>('opt_outs');
  if (accountId !== null) query.where({ account_id: accountId });
  if (filter.number) query.andWhere({ number: filter.number });
  return fetchPage<OptOutRow>(db, query, page);
}

export interface OptOutChangeRow extends Required<OptOutChange> {
  id: string;
  account_id: string;
  number: string;
  change: 'opt_out' | 'opt_in';
  created_at: Date;
}

/** Every change of one number's opt-out for the account, oldest first. */
export async function optOutChangesOf(db: Knex, accountId: string, number: string): Promise<OptOutChangeRow[]> {
  return db<OptOutChangeRow>('opt_out_changes').where({ account_id: accountId, number }).orderBy('id');
}
