import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export interface BlocklistRow {
  id: string;
  number: string;
  account_id: string | null;
  reason: string | null;
  created_at: Date;
}

export async function insertBlocklistEntry(db: Knex, entry: Omit<BlocklistRow, 'created_at'>): Promise<BlocklistRow> {
  const [row] = await db<BlocklistRow>('blocklist_entries').insert(entry).returning('*');
  return row;
}

/** Deletes the entry for this number and scope (null = the global entry); answers it. */
export async function deleteBlocklistEntry(db: Knex, number: string, accountId: string | null): Promise<BlocklistRow | undefined> {
  const query = db<BlocklistRow>('blocklist_entries').where({ number });
  if (accountId === null) query.whereNull('account_id');
  else query.andWhere({ account_id: accountId });
  const [row] = await query.delete().returning('*');
  return row;
}

/** A page of the blocklist (every account's entries and the global ones), newest first. */
export async function listBlocklist(db: Knex, filter: { number?: string }, page: PageRequest): Promise<Page<BlocklistRow>> {
  const query = db<BlocklistRow>('blocklist_entries');
  if (filter.number !== undefined) query.where({ number: filter.number });
  return fetchPage<BlocklistRow>(db, query, page);
}
