import type { Knex } from 'knex';
import type { ApiKeyRow } from '../db/api-keys.ts';
import { addKeySends, keySendCount, removeKeySends, type SendPeriod, type SendWindow } from '../db/key-send-counts.ts';
import { tooManyRequests } from './errors.ts';

const utcDate = (date: Date) => date.toISOString().slice(0, 10);
const startOfNextDay = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
const startOfMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
const startOfNextMonth = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

/** Messages counted against a key's limits by this transaction, some of which it may give back. */
export interface SendAllowance {
  /** Takes back `count` of them: messages that were refused after all (a bulk item the balance did not cover). */
  giveBack: (count: number) => Promise<void>;
}

const NOTHING_COUNTED: SendAllowance = { giveBack: async () => {} };

/**
 * A key's daily and monthly message limits (UTC windows). `count` messages more must fit in
 * both, or the send is refused whole with 429 and a Retry-After up to the window's end. They
 * are counted at once with a guarded upsert of the key's counts (one statement, whatever the
 * month holds so far); its rows stay locked to the commit, so concurrent sends through the key
 * are counted exactly.
 */
export async function checkSendLimits(
  trx: Knex,
  key: Pick<ApiKeyRow, 'id' | 'daily_limit' | 'monthly_limit'>,
  count: number,
  now = new Date(),
): Promise<SendAllowance> {
  if (count === 0 || (key.daily_limit === null && key.monthly_limit === null)) return NOTHING_COUNTED;
  const limits = [
    { period: 'day' as const, startsOn: utcDate(now), limit: key.daily_limit, end: startOfNextDay(now), code: 'daily_limit_exceeded', name: 'day' },
    {
      period: 'month' as const,
      startsOn: utcDate(startOfMonth(now)),
      limit: key.monthly_limit,
      end: startOfNextMonth(now),
      code: 'monthly_limit_exceeded',
      name: 'month',
    },
  ];
  const windows = limits.filter((window): window is typeof window & SendWindow => window.limit !== null);
  const counted = new Set<SendPeriod>(await addKeySends(trx, key.id, windows, count));
  const refused = windows.find((window) => !counted.has(window.period));
  if (refused) {
    const used = await keySendCount(trx, key.id, refused);
    throw tooManyRequests(
      refused.code,
      `This key may send ${refused.limit} messages per UTC ${refused.name}; ${used} sent, ${count} more asked.`,
      (refused.end.getTime() - now.getTime()) / 1000,
    );
  }
  return { giveBack: async (back) => (back > 0 ? removeKeySends(trx, key.id, windows, back) : undefined) };
}
