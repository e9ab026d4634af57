import type { Knex } from 'knex';
import type { ApiKeyRow } from '../db/api-keys.ts';
import { addKeySends, keySendCount, removeKeySends, type SendPeriod, type SendWindow } from '../db/key-send-counts.ts';
import { tooManyRequests, type ApiError } from './errors.ts';

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
  const windows = limitWindows(key, count, now);
  if (windows.length === 0) return NOTHING_COUNTED;
  const counted = new Set<SendPeriod>(await addKeySends(trx, key.id, windows, count));
  const refused = windows.find((window) => !counted.has(window.period));
  if (refused) throw limitRefusal(refused, await keySendCount(trx, key.id, refused), count, now);
  return { giveBack: async (back) => (back > 0 ? removeKeySends(trx, key.id, windows, back) : undefined) };
}

/** The refusal `count` more messages would meet under the key's limits, counting nothing (a preview). */
export async function sendLimitsRefusal(
  db: Knex,
  key: Pick<ApiKeyRow, 'id' | 'daily_limit' | 'monthly_limit'>,
  count: number,
  now: Date,
): Promise<ApiError | undefined> {
  for (const window of limitWindows(key, count, now)) {
    const used = await keySendCount(db, key.id, window);
    if (used + count > window.limit) return limitRefusal(window, used, count, now);
  }
}

type LimitWindow = SendWindow & { end: Date; code: string; name: string };

function limitWindows(key: Pick<ApiKeyRow, 'daily_limit' | 'monthly_limit'>, count: number, now: Date): LimitWindow[] {
  if (count === 0) return [];
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
  return limits.filter((window): window is LimitWindow => window.limit !== null);
}

const limitRefusal = (window: LimitWindow, used: number, count: number, now: Date): ApiError =>
  tooManyRequests(
    window.code,
    `This key may send ${window.limit} messages per UTC ${window.name}; ${used} sent, ${count} more asked.`,
    (window.end.getTime() - now.getTime()) / 1000,
  );
