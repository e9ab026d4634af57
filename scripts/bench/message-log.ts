/** What the bench reads from the messages table: backlog, time to sent, and the seeded history. */
import type pg from 'pg';

/** Pending messages that are due (one scheduled ahead is not a backlog), read by the index the reconciler reads them by. */
export async function pendingCount(pool: pg.Pool, accountId?: string): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM messages WHERE status = 'pending' AND coalesce(send_at, created_at) <= now() AND ($1::text IS NULL OR account_id = $1)`,
    [accountId],
  );
  return rows[0].n;
}

/** created_at to sent_at of every message of the account, in milliseconds, and how many never reached `sent`. */
export async function sentLatency(pool: pg.Pool, accountId: string): Promise<{ p50: number; p99: number; messages: number; neverSent: number }> {
  const { rows } = await pool.query<{ p: number[] | null; messages: number; never_sent: number }>(
    `SELECT percentile_cont(ARRAY[0.5, 0.99]) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - created_at) * 1000) AS p,
            count(*)::int AS messages, (count(*) - count(sent_at))::int AS never_sent
       FROM messages WHERE account_id = $1`,
    [accountId],
  );
  const [p50, p99] = rows[0].p ?? [Number.NaN, Number.NaN];
  return { p50, p99, messages: rows[0].messages, neverSent: rows[0].never_sent };
}

/** Samples an account's pending count once a second while a load runs; the answer stops it and gives the samples. */
export function samplePending(pool: pg.Pool, accountId: string): () => Promise<number[]> {
  const samples: Promise<number>[] = [];
  const timer = setInterval(() => samples.push(pendingCount(pool, accountId)), 1000);
  return () => (clearInterval(timer), Promise.all(samples));
}

/**
 * `count` messages sent through `keyId` from the start of this UTC month to now, so that they count
 * against the key's limits, in a realistic mix of statuses; by plain SQL, as a million through the
 * API would take most of an hour, with the counters Dispatch keeps beside them brought up to date.
 */
export async function seedMessages(pool: pg.Pool, accountId: string, keyId: string, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO messages (id, account_id, api_key_id, "to", "from", body, status, encoding, segments, cost, currency, attempts, reference,
                           created_at, sent_at, delivered_at, failed_at)
     SELECT 'msg_S' || lpad(g::text, 23, '0'), $1, $2, '+12127' || lpad((g % 10000)::text, 6, '0'), 'Bench', 'Your code is 482913.', s.status,
            'GSM-7', 1, 0.001, 'USD', 1, 'bench-seed', t.at, CASE WHEN s.status <> 'failed' THEN t.at + interval '200 ms' END,
            CASE WHEN s.status = 'delivered' THEN t.at + interval '2 s' END, CASE WHEN s.status IN ('failed', 'undelivered') THEN t.at + interval '2 s' END
       FROM generate_series(1, $3::int) AS g,
            LATERAL (SELECT CASE g % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'undelivered' WHEN 2 THEN 'sent' ELSE 'delivered' END AS status) AS s,
            LATERAL (SELECT date_trunc('month', now(), 'UTC') + (now() - interval '1 minute' - date_trunc('month', now(), 'UTC')) * (g::float8 / $3) AS at) AS t`,
    [accountId, keyId, count],
  );
  await countSeeded(pool, accountId, 'bench-seed', keyId);
  await settleSeed(pool, ['messages']);
}

/**
 * After a seed, the database as it would be by the time such data had come in: vacuumed and analyzed,
 * as autovacuum would have, and checkpointed, so that the next load does not run while the seed's
 * dirty pages are written out.
 */
export async function settleSeed(pool: pg.Pool, tables: string[]): Promise<void> {
  await pool.query(`VACUUM ANALYZE ${tables.join(', ')}`);
  await pool.query('CHECKPOINT');
}

/**
 * Adds the seeded messages (those of `reference`) to the counters Dispatch's own writes keep: the
 * account's counts by status, and the key's counts of this UTC day and month when `keyId` sent them.
 */
export async function countSeeded(pool: pg.Pool, accountId: string, reference: string, keyId?: string): Promise<void> {
  await pool.query(
    `INSERT INTO message_counts AS c (account_id, stripe, pending, sent, delivered, failed, undelivered)
       SELECT $1, 0, count(*) FILTER (WHERE status = 'pending'), count(*) FILTER (WHERE status = 'sent'), count(*) FILTER (WHERE status = 'delivered'),
              count(*) FILTER (WHERE status = 'failed'), count(*) FILTER (WHERE status = 'undelivered') FROM messages WHERE account_id = $1 AND reference = $2
       ON CONFLICT (account_id, stripe) DO UPDATE SET pending = c.pending + excluded.pending, sent = c.sent + excluded.sent,
         delivered = c.delivered + excluded.delivered, failed = c.failed + excluded.failed, undelivered = c.undelivered + excluded.undelivered`,
    [accountId, reference],
  );
  if (keyId !== undefined) {
    await pool.query(
      `INSERT INTO key_send_counts AS c (api_key_id, period, starts_on, count)
       SELECT $1, p.period, p.starts_on, count(*)
         FROM (VALUES ('day', date_trunc('day', now() AT TIME ZONE 'UTC')::date), ('month', date_trunc('month', now() AT TIME ZONE 'UTC')::date)) AS p (period, starts_on)
         JOIN messages m ON m.api_key_id = $1 AND m.created_at >= p.starts_on::timestamp AT TIME ZONE 'UTC'
        GROUP BY p.period, p.starts_on
       ON CONFLICT (api_key_id, period, starts_on) DO UPDATE SET count = c.count + excluded.count`,
      [keyId],
    );
  }
}
