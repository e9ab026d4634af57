import type { Knex } from 'knex';

export type SendPeriod = 'day' | 'month';

/** One window of a key's limits: its period, the UTC date it starts on (YYYY-MM-DD) and its limit. */
export interface SendWindow {
  period: SendPeriod;
  startsOn: string;
  limit: number;
}

/**
 * Adds `count` messages to the key's count of each window in one guarded upsert: a window that
 * `count` more would take past its limit keeps its count. Answers the periods that took them.
 * Each row stays locked to the end of the transaction, so sends through one key are counted one
 * at a time and the limit holds exactly.
 */
export async function addKeySends(db: Knex, apiKeyId: string, windows: SendWindow[], count: number): Promise<SendPeriod[]> {
  const day = windows.find((window) => window.period === 'day');
  const month = windows.find((window) => window.period === 'month');
  const { rows } = await db.raw<{ rows: { period: SendPeriod }[] }>(
    `INSERT INTO key_send_counts AS c (api_key_id, period, starts_on, count)
     SELECT :apiKeyId, w.period, w.starts_on, :count
     FROM (VALUES ('day', :dayStart::date, :dayLimit::int), ('month', :monthStart::date, :monthLimit::int)) AS w (period, starts_on, cap)
     WHERE :count <= w.cap
     ON CONFLICT (api_key_id, period, starts_on) DO UPDATE SET count = c.count + excluded.count
     WHERE c.count + excluded.count <= CASE excluded.period WHEN 'day' THEN :dayLimit::int ELSE :monthLimit::int END
     RETURNING period`,
    { apiKeyId, count, dayStart: day?.startsOn ?? null, dayLimit: day?.limit ?? null, monthStart: month?.startsOn ?? null, monthLimit: month?.limit ?? null },
  );
  return rows.map((row) => row.period);
}

/** Takes `count` messages back off the key's count of each window (ones it added in this transaction). */
export async function removeKeySends(db: Knex, apiKeyId: string, windows: SendWindow[], count: number): Promise<void> {
  await db('key_send_counts')
    .where({ api_key_id: apiKeyId })
    .whereIn(
      ['period', 'starts_on'],
      windows.map((window) => [window.period, window.startsOn]),
    )
    .decrement('count', count);
}

export async function keySendCount(db: Knex, apiKeyId: string, window: SendWindow): Promise<number> {
  const row = await db('key_send_counts')
    .where({ api_key_id: apiKeyId, period: window.period, starts_on: window.startsOn })
    .first<{ count: number } | undefined>('count');
  return row?.count ?? 0;
}
