import { findMessage, listMessages as listMessageRows } from '../db/messages.ts';
import { notFound } from '../domain/errors.ts';
import { toMessage, toPagination } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const getMessage: CustomerHandler<'getMessage'> = async ({ params }, { services, caller }) => {
  const message = await findMessage(services.db, caller.account.id, params.id);
  if (!message) throw notFound('message', params.id);
  return { status: 200, data: toMessage(message) };
};

export const listMessages: CustomerHandler<'listMessages'> = async ({ query }, { services, caller }) => {
  const page = query.page ?? 1;
  const limit = query.limit ?? 50;
  const filter = { status: query.status, to: query.to, createdAfter: query.created_after, createdBefore: query.created_before };
  const { rows, total } = await listMessageRows(services.db, caller.account.id, filter, { page, limit });
  return { status: 200, data: rows.map(toMessage), pagination: toPagination(page, limit, total) };
};
