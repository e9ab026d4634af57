import { listEvents as listEventRows } from '../db/events.ts';
import { toEvent, toPagination } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listEvents: CustomerHandler<'listEvents'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const { rows, total } = await listEventRows(services.db, caller.account.id, { type: query.type }, { page, limit });
  return { status: 200, data: rows.map(toEvent), pagination: toPagination(page, limit, total) };
};
