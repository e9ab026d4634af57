import { findSender, listSenders as listSenderRows } from '../db/senders.ts';
import { notFound } from '../domain/errors.ts';
import { registerSender } from '../domain/senders.ts';
import { toPagination, toSender } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listSenders: CustomerHandler<'listSenders'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const { rows, total } = await listSenderRows(services.db, caller.account.id, { status: query.status }, { page, limit });
  return { status: 200, data: rows.map(toSender), pagination: toPagination(page, limit, total) };
};

export const createSender: CustomerHandler<'createSender'> = async ({ body }, { services, caller }) => ({
  status: 201,
  data: toSender(await registerSender(services.db, caller.account.id, body)),
});

export const getSender: CustomerHandler<'getSender'> = async ({ params }, { services, caller }) => {
  const sender = await findSender(services.db, params.id, caller.account.id);
  if (!sender) throw notFound('sender', params.id);
  return { status: 200, data: toSender(sender) };
};
