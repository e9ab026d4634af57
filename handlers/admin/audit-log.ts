import { listAdminActions } from '../../domain/audit.ts';
import { toAuditLogEntry, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminListAuditLog: AdminHandler<'adminListAuditLog'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const filter = {
    action: query.action,
    targetType: query.target_type,
    targetId: query.target_id,
    operatorId: query.operator_id === 'root' ? null : query.operator_id,
    accountId: query.account_id,
    createdAfter: query.created_after === undefined ? undefined : new Date(query.created_after),
    createdBefore: query.created_before === undefined ? undefined : new Date(query.created_before),
  };
  const { rows, total } = await listAdminActions(services.db, filter, { page, limit });
  return { status: 200, data: rows.map(toAuditLogEntry), pagination: toPagination(page, limit, total) };
};
