import type { Knex } from 'knex';
import { lockKey, type ApiKeyRow } from '../db/api-keys.ts';
import { countKeyMessagesSince } from '../db/messages.ts';
import { tooManyRequests } from './errors.ts';

const startOfDay = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
const startOfNextDay = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
const startOfMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const startOfNextMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

/**
 * A key's daily and monthly message limits (UTC windows). `count` messages more must fit in
 * both, or the send is refused whole with 429 and a Retry-After up to the window's end. The key's
 * row is locked for the transaction, so concurrent sends through it are counted exactly.
 */
export async function checkSendLimits(trx: Knex, key: Pick<ApiKeyRow, 'id' | 'daily_limit' | 'monthly_limit'>, count: number, now = new Date()): Promise<void> {
  if (count === 0 || (key.daily_limit === null && key.monthly_limit === null)) return;
  await lockKey(trx, key.id);
  const windows = [
    { limit: key.daily_limit, start: startOfDay(now), end: startOfNextDay(now), code: 'daily_limit_exceeded', name: 'day' },
    { limit: key.monthly_limit, start: startOfMonth(now), end: startOfNextMonth(now), code: 'monthly_limit_exceeded', name: 'month' },
  ];
  for (const window of windows) {
    if (window.limit === null) continue;
    const used = await countKeyMessagesSince(trx, key.id, window.start);
    if (used + count > window.limit) {
      throw tooManyRequests(window.code, `This key may send ${window.limit} messages per UTC ${window.name}; ${used} sent, ${count} more asked.`, (window.end.getTime() - now.getTime()) / 1000);
    }
  }
}
