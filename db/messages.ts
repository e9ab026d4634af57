import type { Knex } from 'knex';
import { NEWEST_FIRST, readPage, type Page, type PageRequest } from './pagination.ts';

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

/**
 * Each account's message counts by status live in message_counts, written by the same statement
 * that inserts or moves messages, so that a list's total is a read of a few rows instead of a
 * count over every match, and no write path can forget them. Every database backend adds to a
 * row of its own (stripe = its pid): two transactions never write the same row, so counting adds
 * no lock wait to sends or to the worker, and no lock order to keep with the balance row.
 */
const COUNT_COLUMNS = MESSAGE_STATUSES.join(', ');
const addToCounts = (source: string) => `
  INSERT INTO message_counts AS c (account_id, stripe, ${COUNT_COLUMNS})
  ${source}
  ON CONFLICT (account_id, stripe) DO UPDATE SET ${MESSAGE_STATUSES.map((status) => `${status} = c.${status} + excluded.${status}`).join(', ')}`;

/** Adds `changes` (rows of account_id, status, delta) to the counts, from this backend's row. */
const countChanges = (changes: string) =>
  addToCounts(`SELECT account_id, pg_backend_pid(), ${MESSAGE_STATUSES.map((status) => `coalesce(sum(delta) FILTER (WHERE status = '${status}'), 0)`).join(', ')}
  FROM ${changes} AS changes GROUP BY account_id`);

export async function insertMessages(db: Knex, rows: NewMessage[]): Promise<MessageRow[]> {
  if (rows.length === 0) return [];
  const insert = db<MessageRow>('messages')
    .insert(rows.map((row) => ({ ...row, error: row.error === null ? null : JSON.stringify(row.error) })) as never)
    .returning('*');
  const result = await db.raw(`WITH inserted AS (?), counted AS (${countChanges('(SELECT account_id, status, 1 AS delta FROM inserted)')}) SELECT * FROM inserted`, [insert]);
  return result.rows;
}

/**
 * Folds into stripe 0 the count rows that backends no longer alive left for the account. A live
 * backend keeps its row, so folding never makes busy connections insert theirs again; a row
 * that a transaction holds (a new backend that took a dead one's pid) is skipped, so a fold
 * waits for nothing but another fold.
 */
export async function foldMessageCounts(db: Knex, accountId: string): Promise<void> {
  await db.raw(
    `WITH folded AS (
       DELETE FROM message_counts WHERE account_id = :accountId AND stripe IN (
         SELECT stripe FROM message_counts
         WHERE account_id = :accountId AND stripe <> 0 AND stripe NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)
         FOR UPDATE SKIP LOCKED)
       RETURNING *)
     ${addToCounts(`SELECT :accountId, 0, ${MESSAGE_STATUSES.map((status) => `sum(${status})`).join(', ')} FROM folded HAVING count(*) > 0`)}`,
    { accountId },
  );
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

function matching(db: Knex, accountId: string, filter: MessageFilter): Knex.QueryBuilder {
  const query = db<MessageRow>('messages').where({ account_id: accountId });
  if (filter.status) query.andWhere({ status: filter.status });
  if (filter.to) query.andWhere({ to: filter.to });
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  return query;
}

// Connections come and go, each leaving a count row: past this many (room for several processes'
// pools of live connections), a read folds those of the backends gone.
const FOLD_AFTER_STRIPES = 64;

/**
 * A page of an account's messages, newest first, and the exact number that match. Without a
 * recipient or a time range the total is the account's counts; otherwise an index-bounded count
 * (a recipient's messages, or the range's). A deep page walks the index for its ids only and
 * reads just its own rows.
 */
export async function listMessages(db: Knex, accountId: string, filter: MessageFilter, { page, limit }: PageRequest): Promise<Page<MessageRow>> {
  const ids = matching(db, accountId, filter).select('id').orderBy(NEWEST_FIRST).limit(limit).offset((page - 1) * limit);
  const rows = db('messages as m').join(ids.as('p'), 'm.id', 'p.id').select('m.*');
  if (filter.to || filter.createdAfter || filter.createdBefore) return readPage<MessageRow>(db, rows, matching(db, accountId, filter).count({ n: '*' }));
  const counted = filter.status ? db.raw('sum(??)', [filter.status]) : db.raw(MESSAGE_STATUSES.map((status) => `sum(${status})`).join(' + '));
  const total = db('message_counts').where({ account_id: accountId }).select(db.raw('coalesce(?, 0)::bigint AS n', [counted]), db.raw('count(*)::int AS stripes'));
  const { rows: messages, total: n, totalRow } = await readPage<MessageRow>(db, rows, total);
  if ((totalRow.stripes as number) > FOLD_AFTER_STRIPES) await foldMessageCounts(db, accountId);
  return { rows: messages, total: n };
}

export async function findMessageById(db: Knex, id: string, forUpdate = false): Promise<MessageRow | undefined> {
  const query = db<MessageRow>('messages').where({ id });
  if (forUpdate) query.forUpdate();
  return query.first();
}

export async function findMessageByProviderId(db: Knex, routeId: number, providerMessageId: string): Promise<MessageRow | undefined> {
  return db<MessageRow>('messages').where({ route_id: routeId, provider_message_id: providerMessageId }).forUpdate().first();
}

/** The guarded state change: only a message still in `from` moves, and its account's counts with it. */
export async function moveMessageStatus(db: Knex, id: string, from: MessageStatus, to: MessageStatus, changes: Partial<MessageRow>): Promise<MessageRow | undefined> {
  const update = db<MessageRow>('messages')
    .where({ id, status: from })
    .update({ ...changes, ...(changes.error !== undefined && { error: changes.error && JSON.stringify(changes.error) }), status: to } as never)
    .returning('*');
  const moved = await db.raw(
    `WITH moved AS (?), counted AS (${countChanges('(SELECT account_id, status, 1 AS delta FROM moved UNION ALL SELECT account_id, ?::text, -1 FROM moved)')}) SELECT * FROM moved`,
    [update, from],
  );
  return moved.rows[0];
}
