import type { Knex } from 'knex';

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

/** Deletes the entry for this number and scope (null = the global entry); answers its id. */
export async function deleteBlocklistEntry(db: Knex, number: string, accountId: string | null): Promise<string | undefined> {
  const query = db<BlocklistRow>('blocklist_entries').where({ number });
  if (accountId === null) query.whereNull('account_id');
  else query.andWhere({ account_id: accountId });
  const [row] = await query.delete().returning('id');
  return row?.id;
}

/** Which of these numbers are blocked for the account, globally or for it alone: one query for any count. */
export async function blockedAmong(db: Knex, accountId: string, numbers: string[]): Promise<Set<string>> {
  if (numbers.length === 0) return new Set();
  const rows = await db<BlocklistRow>('blocklist_entries')
    .whereIn('number', [...new Set(numbers)])
    .andWhere((where) => where.whereNull('account_id').orWhere('account_id', accountId))
    .distinct('number');
  return new Set(rows.map((row) => row.number));
}
