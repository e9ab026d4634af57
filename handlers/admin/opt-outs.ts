import { listOptOuts } from '../../db/opt-outs.ts';
import { toAdminOptOut, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminListOptOuts: AdminHandler<'adminListOptOuts'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listOptOuts(services.db, query.account_id ?? null, { number: query.number }, { page, limit });
  return { status: 200, data: rows.map(toAdminOptOut), pagination: toPagination(page, limit, total) };
};
