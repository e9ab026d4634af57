import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type InboundEncoding = 'GSM-7' | 'UCS-2' | 'Latin-1';

export interface InboundMessageRow {
  id: string;
  /** Null when no account holds the number it was sent to: kept for the operator. */
  account_id: string | null;
  route_id: number;
  provider_message_id: string;
  from: string;
  to: string;
  body: string;
  encoding: InboundEncoding;
  segments: number;
  complete: boolean;
  keyword: string | null;
  received_at: Date;
  created_at: Date;
}

export type NewInboundMessage = Omit<InboundMessageRow, 'created_at'>;

/** Stores the message unless its route already stored this provider id; null for a repeat. */
export async function insertInboundMessage(db: Knex, message: NewInboundMessage): Promise<InboundMessageRow | null> {
  const [row] = await db<InboundMessageRow>('inbound_messages').insert(message).onConflict(['route_id', 'provider_message_id']).ignore().returning('*');
  return row ?? null;
}

/**
 * The account whose approved long code or short code is `number`, compared without a leading
 * '+' (the expression of senders_inbound_number_key, which also makes the answer unique), with
 * the sender ID as that account registered it.
 */
export async function inboundNumberHolder(db: Knex, number: string): Promise<{ account_id: string; sender_id: string } | undefined> {
  return db('senders')
    .whereRaw(`ltrim(sender_id, '+') = ltrim(?, '+')`, [number])
    .andWhere({ status: 'approved' })
    .whereIn('type', ['long_code', 'short_code'])
    .first('account_id', 'sender_id');
}

export async function findInboundMessage(db: Knex, accountId: string, id: string): Promise<InboundMessageRow | undefined> {
  return db<InboundMessageRow>('inbound_messages').where({ account_id: accountId, id }).first();
}

export async function findInboundByProviderId(db: Knex, routeId: number, providerMessageId: string): Promise<InboundMessageRow | undefined> {
  return db<InboundMessageRow>('inbound_messages').where({ route_id: routeId, provider_message_id: providerMessageId }).first();
}

export interface InboundFilter {
  from?: string;
  to?: string;
  createdAfter?: string;
  createdBefore?: string;
}

function filtered(query: Knex.QueryBuilder, filter: InboundFilter): Knex.QueryBuilder {
  if (filter.from) query.andWhere({ from: filter.from });
  if (filter.to) query.andWhere({ to: filter.to });
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  return query;
}

/** A page of an account's inbound messages, newest first. */
export async function listInboundMessages(db: Knex, accountId: string, filter: InboundFilter, page: PageRequest): Promise<Page<InboundMessageRow>> {
  return fetchPage<InboundMessageRow>(db, filtered(db<InboundMessageRow>('inbound_messages').where({ account_id: accountId }), filter), page);
}

/** The operator's page over every account: one account's, those no account holds (`unowned`), or all. */
export async function listAllInboundMessages(db: Knex, filter: { accountId?: string; unowned?: boolean }, page: PageRequest): Promise<Page<InboundMessageRow>> {
  const query = db<InboundMessageRow>('inbound_messages');
  if (filter.accountId !== undefined) query.where({ account_id: filter.accountId });
  if (filter.unowned) query.whereNull('account_id');
  return fetchPage<InboundMessageRow>(db, query, page);
}
