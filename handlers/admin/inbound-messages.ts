import { listAllInboundMessages } from '../../db/inbound-messages.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { simulateInbound } from '../../domain/inbound.ts';
import { toAdminInboundMessage, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminListInboundMessages: AdminHandler<'adminListInboundMessages'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listAllInboundMessages(services.db, { accountId: query.account_id, unowned: query.unowned }, { page, limit });
  return { status: 200, data: rows.map(toAdminInboundMessage), pagination: toPagination(page, limit, total) };
};

export const adminSimulateInboundMessage: AdminHandler<'adminSimulateInboundMessage'> = async ({ params, body }, { services, caller }) => {
  const message = await auditedWrite(services.db, caller.operator, async (trx) => {
    const received = await simulateInbound(trx, services.jobs, params.id, body, services.log);
    const entry = {
      action: 'inbound_message.simulate',
      target_type: 'inbound_message',
      target_id: received.id,
      before: null,
      after: toAdminInboundMessage(received),
    };
    return { result: received, entry };
  });
  return { status: 201, data: toAdminInboundMessage(message) };
};
