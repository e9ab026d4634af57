import type { Knex } from 'knex';
import { runPrepared, statementName } from './statements.ts';
import { columnsOf, insertFromJson } from './json-rows.ts';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';
import { activeEndpointsJson, endpointsFromJson, type FanOutEndpoint } from './webhooks.ts';

export type EventType =
  'message.sent' | 'message.delivered' | 'message.failed' | 'message.received' | 'recipient.opted_out' | 'recipient.opted_in' | 'webhook.test' | 'balance.low';

export interface EventRow {
  id: string;
  account_id: string;
  type: EventType;
  /** The outbound message the event is about; null for events about something else (an opt-out). */
  message_id: string | null;
  data: Record<string, unknown>;
  created_at: Date;
}

/** Every column of events, for the prepared insert (test/db/table-columns.test.ts keeps it whole). */
export const EVENT_COLUMNS = ['id', 'account_id', 'type', 'message_id', 'data', 'created_at'] as const;

const insertEventsText = (events: object[]): string => `${insertFromJson('events', columnsOf(events))} RETURNING ${EVENT_COLUMNS.join(', ')}`;

export async function insertEvents(db: Knex, events: Omit<EventRow, 'created_at'>[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  const text = insertEventsText(events);
  return runPrepared<EventRow>(db, { name: statementName('insert-events', text), text, values: [JSON.stringify(events)] });
}

/**
 * insertEvents, and in the same statement the active endpoints of the events' accounts, to fan
 * them out to: every transaction that records events makes one round trip fewer. The first row
 * alone carries the endpoints.
 */
export async function insertEventsFindingEndpoints(
  db: Knex,
  events: Omit<EventRow, 'created_at'>[],
): Promise<{ events: EventRow[]; endpoints: FanOutEndpoint[] }> {
  if (events.length === 0) return { events: [], endpoints: [] };
  const text = `WITH inserted AS (${insertEventsText(events)})
    SELECT inserted.*, CASE WHEN row_number() OVER () = 1 THEN ${activeEndpointsJson('SELECT account_id FROM inserted')} END AS endpoints FROM inserted`;
  const rows = await runPrepared<EventRow & { endpoints: Parameters<typeof endpointsFromJson>[0] | null }>(db, {
    name: statementName('insert-events-finding-endpoints', text),
    text,
    values: [JSON.stringify(events)],
  });
  return { events: rows.map(({ endpoints: _, ...event }) => event), endpoints: endpointsFromJson(rows[0].endpoints ?? []) };
}

/** How long events are kept and listed. */
export const EVENT_RETENTION_DAYS = 30;

/** The types of v1's first release: a list that names no type holds only these, so an older client never reads a type it does not know. */
export const FIRST_EVENT_TYPES: EventType[] = ['message.sent', 'message.delivered', 'message.failed'];

/** Events a customer asked for to try an endpoint: listed only by name, never as account activity (`*`). */
const ASKED_FOR_ONLY: EventType[] = ['webhook.test'];

const retained = (db: Knex) => db.raw(`now() - interval '${EVENT_RETENTION_DAYS} days'`);

/** `type` names one type, `*` every type but test events; omitted, the first release's types. */
export async function listEvents(db: Knex, accountId: string, filter: { type?: EventType | '*' }, page: PageRequest): Promise<Page<EventRow>> {
  const query = db<EventRow>('events').where({ account_id: accountId }).andWhere('created_at', '>', retained(db));
  if (filter.type === undefined) query.whereIn('type', FIRST_EVENT_TYPES);
  else if (filter.type === '*') query.whereNotIn('type', ASKED_FOR_ONLY);
  else query.andWhere({ type: filter.type });
  return fetchPage<EventRow>(db, query, page);
}

/** An event of the account within retention, as listEvents would list it (test events included). */
export async function findEvent(db: Knex, accountId: string, id: string): Promise<EventRow | undefined> {
  return db<EventRow>('events').where({ account_id: accountId, id }).andWhere('created_at', '>', retained(db)).first();
}

/**
 * Deletes events past retention with their webhook deliveries and attempts; answers how many
 * events went. The ids stay in the database: bound as a list, a busy day's deliveries would pass
 * PostgreSQL's limit of 65,535 parameters, and the purge would fail every day after.
 */
export async function purgeOldEvents(db: Knex, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000);
  const old = 'SELECT id FROM events WHERE created_at < ?';
  return db.transaction(async (trx) => {
    // Locking the deliveries first makes an attempt being recorded wait, then find its delivery
    // gone; the deletions, a later statement, see every attempt recorded before the locks.
    await trx.raw(`SELECT count(*) FROM (SELECT id FROM webhook_deliveries WHERE event_id IN (${old}) FOR UPDATE) AS locked`, [cutoff]);
    const { rows } = await trx.raw<{ rows: { n: number }[] }>(
      `WITH old AS MATERIALIZED (${old}),
         deliveries AS MATERIALIZED (SELECT id FROM webhook_deliveries WHERE event_id IN (SELECT id FROM old)),
         attempts AS (DELETE FROM webhook_attempts WHERE delivery_id IN (SELECT id FROM deliveries)),
         purged_deliveries AS (DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM deliveries)),
         purged AS (DELETE FROM events WHERE id IN (SELECT id FROM old) RETURNING 1)
       SELECT count(*)::int AS n FROM purged`,
      [cutoff],
    );
    return rows[0].n;
  });
}
