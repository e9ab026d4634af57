import { listAllInboundMessages } from '../../db/inbound-messages.ts';
import { simulateInbound } from '../../domain/inbound.ts';
import { toAdminInboundMessage, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminListInboundMessages: AdminHandler<'adminListInboundMessages'> = async ({ query }, { services }) => {
  const page = query.page ?? 1;
  const limit = query.limit ?? 50;
  const { rows, total } = await listAllInboundMessages(services.db, { accountId: query.account_id, unowned: query.unowned }, { page, limit });
  return { status: 200, data: rows.map(toAdminInboundMessage), pagination: toPagination(page, limit, total) };
};

export const adminSimulateInboundMessage: AdminHandler<'adminSimulateInboundMessage'> = async ({ params, body }, { services }) => ({
  status: 201,
  data: toAdminInboundMessage(await simulateInbound(services.db, services.jobs, params.id, body, services.log)),
});
