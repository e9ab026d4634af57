import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type MessageStatus = 'pending' | 'sent' | 'delivered' | 'failed' | 'undelivered';
export const MESSAGE_STATUSES: MessageStatus[] = ['pending', 'sent', 'delivered', 'failed', 'undelivered'];

export interface MessageRow {
  id: string;
  account_id: string;
  api_key_id: string | null;
  to: string;
  from: string;
  body: string;
  status: MessageStatus;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  cost: string;
  currency: string;
  route_id: number | null;
  requested_route_id: number | null;
  provider_message_id: string | null;
  attempts: number;
  error: { type: 'invalid_request_error' | 'balance_error' | 'provider_error'; code: string; message: string } | null;
  reference: string | null;
  created_at: Date;
  sent_at: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
}

export type NewMessage = Omit<MessageRow, 'created_at' | 'sent_at' | 'delivered_at' | 'failed_at' | 'attempts' | 'provider_message_id'> & { failed_at?: Date };

export async function insertMessages(db: Knex, rows: NewMessage[]): Promise<MessageRow[]> {
  if (rows.length === 0) return [];
  return db<MessageRow>('messages')
    .insert(rows.map((row) => ({ ...row, error: row.error === null ? null : JSON.stringify(row.error) })) as never)
    .returning('*');
}

export interface UsageRow {
  status: MessageStatus;
  messages: number;
  cost: string;
}

/** Message counts and cost by status for an account, over messages created in [since, until). */
export async function usageByStatus(db: Knex, accountId: string, since: Date, until: Date): Promise<UsageRow[]> {
  return db('messages')
    .where({ account_id: accountId })
    .andWhere('created_at', '>=', since)
    .andWhere('created_at', '<', until)
    .groupBy('status')
    .select('status', db.raw('count(*)::int AS messages'), db.raw('coalesce(sum(cost), 0) AS cost'));
}

export async function findMessage(db: Knex, accountId: string, id: string): Promise<MessageRow | undefined> {
  return db<MessageRow>('messages').where({ account_id: accountId, id }).first();
}

export interface MessageFilter {
  status?: MessageStatus;
  to?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export async function listMessages(db: Knex, accountId: string, filter: MessageFilter, page: PageRequest): Promise<Page<MessageRow>> {
  const query = db<MessageRow>('messages').where({ account_id: accountId });
  if (filter.status) query.andWhere({ status: filter.status });
  if (filter.to) query.andWhere({ to: filter.to });
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  return fetchPage<MessageRow>(db, query, page);
}

export async function findMessageById(db: Knex, id: string, forUpdate = false): Promise<MessageRow | undefined> {
  const query = db<MessageRow>('messages').where({ id });
  if (forUpdate) query.forUpdate();
  return query.first();
}

export async function findMessageByProviderId(db: Knex, routeId: number, providerMessageId: string): Promise<MessageRow | undefined> {
  return db<MessageRow>('messages').where({ route_id: routeId, provider_message_id: providerMessageId }).forUpdate().first();
}

/** The guarded state change: only a message still in `from` moves. */
export async function moveMessageStatus(db: Knex, id: string, from: MessageStatus, to: MessageStatus, changes: Partial<MessageRow>): Promise<MessageRow | undefined> {
  const [row] = await db<MessageRow>('messages')
    .where({ id, status: from })
    .update({ ...changes, ...(changes.error !== undefined && { error: changes.error && JSON.stringify(changes.error) }), status: to } as never)
    .returning('*');
  return row;
}

export async function updateMessage(db: Knex, id: string, changes: Partial<MessageRow>): Promise<void> {
  await db('messages').where({ id }).update(changes as never);
}

/** Messages sent through a key since `since`, not counting those refused at acceptance. */
export async function countKeyMessagesSince(db: Knex, apiKeyId: string, since: Date): Promise<number> {
  const [{ count }] = await db('messages')
    .where({ api_key_id: apiKeyId })
    .andWhere('created_at', '>=', since)
    .andWhereNot((where) => where.where({ status: 'failed', attempts: 0 }).whereNull('route_id'))
    .count<{ count: number }[]>({ count: '*' });
  return Number(count);
}
