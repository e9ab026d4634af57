import type { Knex } from 'knex';
import type { AccountRow } from '../db/accounts.ts';
import { MESSAGE_STATUSES, usageByStatus, type MessageStatus } from '../db/messages.ts';
import { fromUnits, toUnits } from './money.ts';

export type UsagePeriod = 'day' | 'month' | 'all';

export interface Usage {
  period: UsagePeriod;
  startsAt: Date;
  endsAt: Date;
  messages: number;
  cost: string;
  byStatus: Record<MessageStatus, number>;
}

/** The start of a period in UTC: today's midnight, the 1st of this month, or the account's opening. */
export function periodStart(period: UsagePeriod, now: Date, accountCreatedAt: Date): Date {
  if (period === 'day') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (period === 'month') return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return accountCreatedAt;
}

export async function usageFor(db: Knex, account: AccountRow, period: UsagePeriod, now = new Date()): Promise<Usage> {
  const startsAt = periodStart(period, now, account.created_at);
  // The end is exclusive: a message stamped in this very millisecond is still counted.
  const rows = await usageByStatus(db, account.id, startsAt, new Date(now.getTime() + 1));
  const byStatus = Object.fromEntries(MESSAGE_STATUSES.map((status) => [status, 0])) as Record<MessageStatus, number>;
  let messages = 0;
  let cost = 0n;
  for (const row of rows) {
    byStatus[row.status] = row.messages;
    messages += row.messages;
    cost += toUnits(row.cost);
  }
  return { period, startsAt, endsAt: now, messages, cost: fromUnits(cost), byStatus };
}
