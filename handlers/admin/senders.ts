import { findSender, listAllSenders } from '../../db/senders.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { reviewSender } from '../../domain/senders.ts';
import { toAdminSender, toPagination, toSender } from '../representations.ts';
import type { AdminCaller, AdminHandler, Context } from '../types.ts';

async function review({ services, caller }: Context<AdminCaller>, id: string, decision: 'approve' | 'reject' | 'suspend') {
  const sender = await auditedWrite(services.db, caller.operator, async (trx) => {
    const before = await findSender(trx, id);
    const after = await reviewSender(trx, id, decision);
    return {
      result: after,
      entry: { action: `sender.${decision}`, target_type: 'sender', target_id: id, before: before ? toSender(before) : null, after: toSender(after) },
    };
  });
  return { status: 200 as const, data: toSender(sender) };
}

export const adminApproveSender: AdminHandler<'adminApproveSender'> = ({ params }, context) => review(context, params.id, 'approve');

export const adminRejectSender: AdminHandler<'adminRejectSender'> = ({ params }, context) => review(context, params.id, 'reject');

export const adminSuspendSender: AdminHandler<'adminSuspendSender'> = ({ params }, context) => review(context, params.id, 'suspend');

export const adminListSenders: AdminHandler<'adminListSenders'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listAllSenders(services.db, { status: query.status, senderId: query.sender_id, accountId: query.account_id }, { page, limit });
  return { status: 200, data: rows.map(toAdminSender), pagination: toPagination(page, limit, total) };
};
