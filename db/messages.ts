import type { Knex } from 'knex';
import { runPrepared, statementName, type Statement } from './statements.ts';
import { columnsOf, insertFromJson } from './json-rows.ts';
import { NEWEST_FIRST, readPage, type Page, type PageRequest } from './pagination.ts';

export type MessageStatus = 'pending' | 'sent' | 'delivered' | 'failed' | 'undelivered';
export const MESSAGE_STATUSES: MessageStatus[] = ['pending', 'sent', 'delivered', 'failed', 'undelivered'];

export interface MessageRow {
  id: string;
  account_id: string;
  api_key_id: string | null;
  to: string;
  from: string;
  /** The body as sent: the one given, or with its GSM-7 look-alikes replaced when `smart_encoded`. */
  body: string;
  smart_encoded: boolean;
  status: MessageStatus;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  cost: string;
  currency: string;
  /** The destination country (ISO 3166 code), for the statistics; null for messages older than it. */
  country: string | null;
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
  /** When the message may go to an upstream; null: at once. */
  send_at: Date | null;
  /** Seconds from send_at (or acceptance) within which an upstream must take it; null: the send window. */
  validity_period: number | null;
  bulk_id: string | null;
  /** The quiet-hours window it was sent within, with the zones it held in and whether it moved send_at. */
  send_window: { start: string; end: string; time_zone: string | null; time_zones: string[]; delayed: boolean } | null;
}

/**
 * Every column of messages, for the prepared statements that answer rows: a prepared `*` would
 * fail once a migration adds a column (test/db/table-columns.test.ts keeps this list whole).
 */
export const MESSAGE_COLUMNS = [
  'id',
  'account_id',
  'api_key_id',
  'to',
  'from',
  'body',
  'status',
  'encoding',
  'segments',
  'cost',
  'currency',
  'route_id',
  'provider_message_id',
  'attempts',
  'error',
  'reference',
  'created_at',
  'sent_at',
  'delivered_at',
  'failed_at',
  'requested_route_id',
  'country',
  'send_at',
  'validity_period',
  'bulk_id',
  'send_window',
  'smart_encoded',
] as const;
const columnsFrom = (alias: string) => MESSAGE_COLUMNS.map((column) => `${alias}."${column}"`).join(', ');

export type NewMessage = Omit<
  MessageRow,
  | 'created_at'
  | 'sent_at'
  | 'delivered_at'
  | 'failed_at'
  | 'attempts'
  | 'provider_message_id'
  | 'country'
  | 'send_at'
  | 'validity_period'
  | 'bulk_id'
  | 'send_window'
  | 'smart_encoded'
> & {
  failed_at?: Date;
  country?: string | null;
  send_at?: Date | null;
  validity_period?: number | null;
  bulk_id?: string | null;
  send_window?: MessageRow['send_window'];
  /** Given for every row of an insert or for none (then false). */
  smart_encoded?: boolean;
};

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
  const text = `WITH inserted AS (${insertFromJson('messages', columnsOf(rows))} RETURNING ${columnsFrom('messages')}),
    counted AS (${countChanges('(SELECT account_id, status, 1 AS delta FROM inserted)')}) SELECT * FROM inserted`;
  return runPrepared<MessageRow>(db, { name: statementName('insert-messages', text), text, values: [JSON.stringify(rows)] });
}

/** A counter row's stripe is that of a backend that has exited: no connection writes it any more. */
export const STRIPE_OF_EXITED_BACKEND = 'stripe NOT IN (SELECT pid FROM pg_stat_activity WHERE pid IS NOT NULL)';

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
         WHERE account_id = :accountId AND stripe <> 0 AND ${STRIPE_OF_EXITED_BACKEND}
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
  /** Only messages waiting for their send_at: pending, with a send time. */
  scheduled?: boolean;
  sendAfter?: string;
  sendBefore?: string;
}

/** The operator's filters: any account's messages, by more than the customer may ask. */
export interface AdminMessageFilter extends MessageFilter {
  accountId?: string;
  routeId?: number;
  errorCode?: string;
  providerMessageId?: string;
}

function filtered(db: Knex, filter: AdminMessageFilter): Knex.QueryBuilder {
  const query = db<MessageRow>('messages');
  if (filter.accountId !== undefined) query.where({ account_id: filter.accountId });
  if (filter.status) query.andWhere({ status: filter.status });
  if (filter.to) query.andWhere({ to: filter.to });
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  if (filter.scheduled) query.andWhere({ status: 'pending' }).whereNotNull('send_at');
  if (filter.sendAfter) query.andWhere('send_at', '>', filter.sendAfter);
  if (filter.sendBefore) query.andWhere('send_at', '<', filter.sendBefore);
  if (filter.routeId !== undefined) query.andWhere({ route_id: filter.routeId });
  if (filter.errorCode !== undefined) query.andWhereRaw("error->>'code' = ?", [filter.errorCode]);
  if (filter.providerMessageId !== undefined) query.andWhereRaw('id IN (?)', [byProviderMessageId(db, filter.providerMessageId)]);
  return query;
}

/**
 * The messages an upstream knows by this id, whole or as one of their parts. Both indexes lead
 * with the route (an upstream's ids are unique only within its route), so the few routes drive
 * one index probe each instead of a scan of every message.
 */
function byProviderMessageId(db: Knex, providerMessageId: string): Knex.Raw {
  return db.raw(
    `SELECT m.id FROM routes r JOIN messages m ON m.route_id = r.id AND m.provider_message_id = :id
     UNION SELECT p.message_id FROM routes r JOIN message_parts p ON p.route_id = r.id AND p.provider_message_id = :id`,
    { id: providerMessageId },
  );
}

// Connections come and go, each leaving a count row: past this many (room for several processes'
// pools of live connections), a read folds those of the backends gone.
const FOLD_AFTER_STRIPES = 64;

// From this offset on, a page of an account's messages (all, or of one status) starts in the hour
// that holds its first row, found from the hourly counters, instead of walking every newer entry
// of the index: page 1,000 of a 1,000,000-message account walked 50,000 entries. Below it,
// summing the account's hours costs more than the walk.
const SKIP_BY_HOURS_FROM = 10_000;

/**
 * The ids of the page at `offset` of an account's messages (of `status`, when given), newest
 * first, without walking the newer ones: message_stats, which the triggers on messages keep
 * exact in the same transactions, counts the messages of each hour of created_at (UTC), so the
 * newest hour whose count, with the counts of the hours after it, passes `offset` holds the
 * page's first row, and the rows of the later hours are skipped by created_at, not by offset.
 * One statement: the counts and the messages are read in one snapshot.
 */
function idsFromTheirHour(db: Knex, accountId: string, status: MessageStatus | undefined, counted: Knex.Raw, offset: number, limit: number): Knex.Raw {
  const hours = db('message_stats')
    .where({ account_id: accountId })
    .groupBy('hour')
    .select('hour', db.raw('? AS n', [counted]));
  const running = db.queryBuilder().from(hours.as('hours')).select('hour', 'n', db.raw('sum(n) OVER (ORDER BY hour DESC) AS through'));
  const start = db
    .queryBuilder()
    .from(running.as('running'))
    .where('through', '>', offset)
    .orderBy('hour', 'desc')
    .limit(1)
    .select('hour', db.raw('through - n AS newer'));
  const inHour = db<MessageRow>('messages')
    .where({ account_id: accountId, ...(status && { status }) })
    .andWhere('created_at', '<', db.raw(`(start.hour + interval '1 hour') AT TIME ZONE 'UTC'`))
    .select('id')
    .orderBy(NEWEST_FIRST);
  return db.raw('(SELECT page.id FROM ? AS start CROSS JOIN LATERAL (? LIMIT ? OFFSET ? - start.newer) AS page)', [start, inHour, limit, offset]);
}

/**
 * A page of an account's messages, newest first, and the exact number that match. Without a
 * recipient or a time range the total is the account's counts; otherwise an index-bounded count
 * (a recipient's messages, or the range's). A deep page walks the index for its ids only and
 * reads just its own rows.
 */
export async function listMessages(db: Knex, accountId: string, filter: MessageFilter, page: PageRequest): Promise<Page<MessageRow>> {
  return listAllMessages(db, { ...filter, accountId }, page);
}

/**
 * A page of the messages of every account (the operator's list), or of one account, as
 * listMessages describes. Filtered by status alone, the total of every account is the sum of
 * every account's counts, so that the operator's first page never counts the whole table.
 */
export async function listAllMessages(db: Knex, filter: AdminMessageFilter, { page, limit }: PageRequest): Promise<Page<MessageRow>> {
  const offset = (page - 1) * limit;
  const narrowed =
    filter.to ||
    filter.createdAfter ||
    filter.createdBefore ||
    filter.scheduled ||
    filter.sendAfter ||
    filter.sendBefore ||
    filter.routeId !== undefined ||
    filter.errorCode !== undefined ||
    filter.providerMessageId !== undefined;
  const counted = filter.status ? db.raw('sum(??)', [filter.status]) : db.raw(MESSAGE_STATUSES.map((status) => `sum(${status})`).join(' + '));
  const ids =
    !narrowed && filter.accountId !== undefined && offset >= SKIP_BY_HOURS_FROM
      ? idsFromTheirHour(db, filter.accountId, filter.status, counted, offset, limit)
      : filtered(db, filter).select('id').orderBy(NEWEST_FIRST).limit(limit).offset(offset);
  const rows = db('messages as m')
    .join(db.raw('? AS p', [ids]), 'm.id', 'p.id')
    .select('m.*');
  if (narrowed) return readPage<MessageRow>(db, rows, filtered(db, filter).count({ n: '*' }));
  const total = db('message_counts').select(db.raw('coalesce(?, 0)::bigint AS n', [counted]), db.raw('count(*)::int AS stripes'));
  if (filter.accountId !== undefined) total.where({ account_id: filter.accountId });
  const { rows: messages, total: n, totalRow } = await readPage<MessageRow>(db, rows, total);
  if (filter.accountId !== undefined && (totalRow.stripes as number) > FOLD_AFTER_STRIPES) await foldMessageCounts(db, filter.accountId);
  return { rows: messages, total: n };
}

export async function findMessageById(db: Knex, id: string, forUpdate = false): Promise<MessageRow | undefined> {
  const query = db<MessageRow>('messages').where({ id });
  if (forUpdate) query.forUpdate();
  return query.first();
}

/** A message as the send worker reads it: with whether any submission of it was begun, settled or not. */
export type MessageToSubmit = MessageRow & { submitted: boolean };

/**
 * Several messages by id, in id order, for the send worker. A submission is counted in
 * `attempts` only once settled, so `submitted` is what tells a message never offered to an
 * upstream from one whose earlier try may still be unsettled (its process died mid-submit).
 */
export async function findMessagesToSubmit(db: Knex, ids: string[]): Promise<MessageToSubmit[]> {
  const { rows } = await db.raw<{ rows: MessageToSubmit[] }>(
    `SELECT m.*, EXISTS (SELECT 1 FROM message_attempts a WHERE a.message_id = m.id) AS submitted
     FROM messages m WHERE m.id = ANY(?::text[]) ORDER BY m.id`,
    [ids],
  );
  return rows;
}

/** Messages of an account locked for a change of status: by ids, or every pending one of a bulk. */
export async function lockMessagesOf(trx: Knex, accountId: string, which: { ids: string[] } | { bulkId: string }): Promise<MessageRow[]> {
  const query = trx<MessageRow>('messages').where({ account_id: accountId });
  if ('ids' in which) query.whereIn('id', which.ids);
  else query.where({ bulk_id: which.bulkId });
  return query.orderBy('id').forUpdate();
}

/** Of these messages, those any submission to an upstream was begun for. */
export async function submittedOf(trx: Knex, ids: string[]): Promise<Set<string>> {
  const rows = await trx('message_attempts').distinct('message_id').whereIn('message_id', ids);
  return new Set(rows.map((row: { message_id: string }) => row.message_id));
}

/**
 * Of these (route, message id) pairs, the messages, locked, that failed with an unknown outcome
 * on that route: submitted there, no answer recorded, refunded. A delivery report from that route
 * may still prove them delivered. One statement for all of them.
 */
export async function findTimedOutMessages(
  trx: Knex.Transaction,
  candidates: { routeId: number; messageId: string }[],
): Promise<(MessageRow & { reported_by: number })[]> {
  if (candidates.length === 0) return [];
  const { rows } = await trx.raw<{ rows: (MessageRow & { reported_by: number })[] }>(
    `SELECT c.route_id AS reported_by, m.* FROM messages m JOIN unnest(?::integer[], ?::text[]) AS c (route_id, message_id) ON m.id = c.message_id
     WHERE m.status = 'failed' AND m.error->>'code' = 'provider_timeout'
       AND EXISTS (SELECT 1 FROM message_attempts a WHERE a.message_id = m.id AND a.route_id = c.route_id AND a.outcome = 'unknown')
     ORDER BY m.id FOR UPDATE OF m`,
    [candidates.map(({ routeId }) => routeId), candidates.map(({ messageId }) => messageId)],
  );
  return rows;
}

/** Sets the charge of a message whose balance change was recorded beside it. */
export async function setMessageCost(db: Knex, id: string, cost: string): Promise<void> {
  await db('messages').where({ id }).update({ cost });
}

/** The read of these messages, each locked, in id order (the order in which every batch locks them): to run behind a lock (lockProviderMessagesThen). */
export const messagesByIdsLocked = (ids: string[]): Statement => ({
  text: 'SELECT * FROM messages WHERE id = ANY ($1::text[]) ORDER BY id FOR UPDATE',
  values: [ids],
});

/** A message found by an upstream id, and whether that id names one part of a concatenated message rather than the whole. */
export type MessageByUpstreamId = MessageRow & { upstream_id_is_part: boolean };

/**
 * The read of the messages these upstream ids belong to, each locked, in id order, as
 * MessageByUpstreamId rows: the reports that look messages up by upstream id must tell parts
 * apart, and this read does it in the same statement. To run behind a lock (lockProviderMessagesThen).
 */
export const messagesByProviderIdsLocked = (upstreamIds: { routeId: number; providerMessageId: string }[]): Statement => ({
  text: `SELECT m.*, EXISTS (SELECT 1 FROM message_parts p WHERE p.route_id = v.route_id AND p.provider_message_id = v.provider_message_id) AS upstream_id_is_part
    FROM messages m JOIN unnest($1::integer[], $2::text[]) AS v (route_id, provider_message_id)
      ON m.route_id = v.route_id AND m.provider_message_id = v.provider_message_id
    ORDER BY m.id FOR UPDATE OF m`,
  values: [upstreamIds.map(({ routeId }) => routeId), upstreamIds.map(({ providerMessageId }) => providerMessageId)],
});

/** The guarded state change: only a message still in `from` moves, and its account's counts with it. */
export async function moveMessageStatus(
  db: Knex,
  id: string,
  from: MessageStatus,
  to: MessageStatus,
  changes: Partial<MessageRow>,
): Promise<MessageRow | undefined> {
  const update = db<MessageRow>('messages')
    .where({ id, status: from })
    .update({ ...changes, ...(changes.error !== undefined && { error: changes.error && JSON.stringify(changes.error) }), status: to } as never)
    .returning('*');
  const moved = await db.raw<{ rows: MessageRow[] }>(
    `WITH moved AS (?), counted AS (${countChanges('(SELECT account_id, status, 1 AS delta FROM moved UNION ALL SELECT account_id, ?::text, -1 FROM moved)')}) SELECT * FROM moved`,
    [update, from],
  );
  return moved.rows[0];
}

/**
 * "Still in this status", for a statement that names its messages by id, written so that the
 * planner cannot answer it from an index on the status instead of the primary key. Statistics
 * taken while few messages were pending (or sent) make `messages_pending_idx`, or on PostgreSQL 18
 * a skip scan of `messages_account_status_idx`, look like a handful of rows; under a backlog it
 * holds the whole backlog, and the statement would read all of it to find its few ids. For 64 ids
 * among 200,000: 266 ms against 0.9 ms (pending, PostgreSQL 15), 110 ms against 0.3 ms (sent, 18).
 * test/db/backlog-plans.test.ts shows the trap and that these statements stay out of it.
 */
export const stillIn = (alias: string, status: MessageStatus) => `(${alias}.status = '${status}') IS TRUE`;

/** A pending message an upstream took, and the submission that carried it. */
export interface SentMessage {
  id: string;
  route_id: number;
  provider_message_id: string;
  attempt_id: number;
  duration_ms: number;
}

/**
 * Moves pending messages to sent on the routes that took them (the error of an earlier try
 * cleared), and settles the submissions that carried them as accepted, in one statement; answers
 * the messages that were still pending (the others, and their submissions, are left as they
 * are). A submission is counted on its message when it is settled, so the move to sent counts
 * it: the message row is written once for it. One settled meanwhile by a later try that took it
 * for dead was counted then, and is not counted again.
 */
export async function markMessagesSent(db: Knex, sends: SentMessage[]): Promise<MessageRow[]> {
  const ids = sends.map(({ id }) => id);
  const moved = await db.raw<{ rows: MessageRow[] }>(
    `WITH v AS (SELECT * FROM jsonb_to_recordset(?::jsonb) AS v (id text, route_id integer, provider_message_id text, attempt_id bigint, duration_ms integer)),
     settled AS (
       UPDATE message_attempts a SET outcome = 'accepted', error_code = NULL, error_message = NULL, duration_ms = v.duration_ms
       FROM v JOIN messages p ON p.id = v.id AND p.id = ANY(?::text[]) AND ${stillIn('p', 'pending')}
       WHERE a.id = v.attempt_id AND a.id = ANY(?::bigint[]) AND a.outcome = 'submitting' AND a.message_id = v.id
       RETURNING a.message_id
     ), moved AS (
       UPDATE messages m SET status = 'sent', route_id = v.route_id, provider_message_id = v.provider_message_id, sent_at = now(), error = NULL,
         attempts = m.attempts + (m.id IN (SELECT message_id FROM settled))::integer
       FROM v WHERE m.id = v.id AND m.id = ANY(?::text[]) AND ${stillIn('m', 'pending')}
       RETURNING m.*
     ), counted AS (${countChanges("(SELECT account_id, status, 1 AS delta FROM moved UNION ALL SELECT account_id, 'pending', -1 FROM moved)")})
     SELECT * FROM moved`,
    [JSON.stringify(sends.map((send) => ({ ...send, duration_ms: Math.round(send.duration_ms) }))), ids, sends.map(({ attempt_id }) => attempt_id), ids],
  );
  return moved.rows;
}

/** Moves sent messages to the final status a delivery report gives them, in one statement; answers those that were still sent. */
export async function markMessagesReported(
  db: Knex,
  reports: { id: string; status: 'delivered' | 'undelivered'; delivered_at?: Date; failed_at?: Date; error?: MessageRow['error'] }[],
): Promise<MessageRow[]> {
  const moved = await db.raw<{ rows: MessageRow[] }>(
    `WITH moved AS (
       UPDATE messages m SET status = v.status, delivered_at = coalesce(v.delivered_at, m.delivered_at), failed_at = coalesce(v.failed_at, m.failed_at), error = coalesce(v.error, m.error)
       FROM jsonb_to_recordset(?::jsonb) AS v (id text, status text, delivered_at timestamptz, failed_at timestamptz, error jsonb)
       WHERE m.id = v.id AND m.id = ANY(?::text[]) AND ${stillIn('m', 'sent')}
       RETURNING m.*
     ), counted AS (${countChanges("(SELECT account_id, status, 1 AS delta FROM moved UNION ALL SELECT account_id, 'sent', -1 FROM moved)")})
     SELECT * FROM moved`,
    [JSON.stringify(reports), reports.map(({ id }) => id)],
  );
  return moved.rows;
}
