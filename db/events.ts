import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type EventType = 'message.sent' | 'message.delivered' | 'message.failed';

export interface EventRow {
  id: string;
  account_id: string;
  type: EventType;
  message_id: string;
  data: Record<string, unknown>;
  created_at: Date;
}

export async function insertEvents(db: Knex, events: Omit<EventRow, 'created_at'>[]): Promise<EventRow[]> {
  if (events.length === 0) return [];
  return db<EventRow>('events')
    .insert(events.map((event) => ({ ...event, data: JSON.stringify(event.data) })) as never)
    .returning('*');
}

export async function listEvents(db: Knex, accountId: string, filter: { type?: EventType }, page: PageRequest): Promise<Page<EventRow>> {
  const query = db<EventRow>('events').where({ account_id: accountId });
  if (filter.type) query.andWhere({ type: filter.type });
  return fetchPage<EventRow>(query, page);
}
