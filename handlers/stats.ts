import { messageStats } from '../domain/stats.ts';
import { toStats } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const getStats: CustomerHandler<'getStats'> = async ({ query }, { services, caller }) => {
  const stats = await messageStats(services.db, {
    accountId: caller.account.id,
    from: query.from,
    to: query.to,
    interval: query.interval,
    groupBy: query.group_by,
  });
  return { status: 200, data: toStats(stats, caller.account.currency) };
};
