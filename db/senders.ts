import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type SenderType = 'alphanumeric' | 'numeric' | 'short_code' | 'long_code';
export type SenderStatus = 'pending' | 'approved' | 'rejected' | 'suspended';

export interface SenderRow {
  id: string;
  account_id: string;
  sender_id: string;
  type: SenderType;
  country_code: string | null;
  status: SenderStatus;
  approved_at: Date | null;
  created_at: Date;
}

/** Inserts a pending sender; null when the account already has this sender_id. */
export async function insertSender(db: Knex, sender: Pick<SenderRow, 'id' | 'account_id' | 'sender_id' | 'type' | 'country_code'>): Promise<SenderRow | null> {
  const result = await db.raw<{ rows: SenderRow[] }>(
    `INSERT INTO senders (id, account_id, sender_id, type, country_code)
     VALUES (:id, :account_id, :sender_id, :type, :country_code)
     ON CONFLICT (account_id, sender_id) DO NOTHING RETURNING *`,
    sender,
  );
  return result.rows[0] ?? null;
}

export async function findSender(db: Knex, id: string, accountId?: string): Promise<SenderRow | undefined> {
  const query = db<SenderRow>('senders').where({ id });
  if (accountId !== undefined) query.andWhere({ account_id: accountId });
  return query.first();
}

export interface SenderFilter {
  status?: SenderStatus;
  /** The sender's text, matched ignoring case. */
  senderId?: string;
  accountId?: string;
}

export async function listSenders(db: Knex, accountId: string, filter: { status?: SenderStatus }, page: PageRequest): Promise<Page<SenderRow>> {
  return listAllSenders(db, { ...filter, accountId }, page);
}

/** Senders of every account (the operator's list), or of one when the filter names it. */
export async function listAllSenders(db: Knex, filter: SenderFilter, page: PageRequest): Promise<Page<SenderRow>> {
  const query = db<SenderRow>('senders');
  if (filter.accountId !== undefined) query.where({ account_id: filter.accountId });
  if (filter.status) query.andWhere({ status: filter.status });
  if (filter.senderId !== undefined) query.andWhereRaw('lower(sender_id) = lower(?)', [filter.senderId]);
  return fetchPage<SenderRow>(db, query, page);
}

/** Guarded state change: only moves a sender that is still in one of `from`; undefined when it was not. */
export async function moveSender(db: Knex, id: string, from: SenderStatus[], to: SenderStatus): Promise<SenderRow | undefined> {
  const [row] = await db<SenderRow>('senders')
    .where({ id })
    .whereIn('status', from)
    .update({
      status: to,
      approved_at: to === 'approved' ? db.fn.now() : db.raw('approved_at'),
    } as never)
    .returning('*');
  return row;
}
