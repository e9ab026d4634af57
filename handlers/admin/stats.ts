import { messageStats } from '../../domain/stats.ts';
import { toStats } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminGetStats: AdminHandler<'adminGetStats'> = async ({ query }, { services }) => {
  const stats = await messageStats(services.db, {
    accountId: query.account_id,
    from: query.from,
    to: query.to,
    interval: query.interval,
    groupBy: query.group_by,
  });
  return { status: 200, data: toStats(stats) };
};
