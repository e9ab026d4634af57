import { findInboundMessage, listInboundMessages as listInboundMessageRows } from '../db/inbound-messages.ts';
import { notFound } from '../domain/errors.ts';
import { toInboundMessage, toPagination } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listInboundMessages: CustomerHandler<'listInboundMessages'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const filter = { from: query.from, to: query.to, createdAfter: query.created_after, createdBefore: query.created_before };
  const { rows, total } = await listInboundMessageRows(services.db, caller.account.id, filter, { page, limit });
  return { status: 200, data: rows.map(toInboundMessage), pagination: toPagination(page, limit, total) };
};

export const getInboundMessage: CustomerHandler<'getInboundMessage'> = async ({ params }, { services, caller }) => {
  const message = await findInboundMessage(services.db, caller.account.id, params.id);
  if (!message) throw notFound('inbound message', params.id);
  return { status: 200, data: toInboundMessage(message) };
};
