import pg from 'pg';
import { connect } from '../../../db/connection.ts';
import { foldStatsStripes } from '../../../domain/stats.ts';
import type { Bench } from '../context.ts';
import { warmReads } from '../load.ts';
import { countSeeded, settleSeed } from '../message-log.ts';
import { count, log, p99s, row, type Measurement } from '../report.ts';

const CONNECTIONS = 8;
const BATCH = 1_000_000;
/** Connections seeding at once, each counting into its own stripe, as one busy Dispatch process's pools would in an hour. */
const SEED_STRIPES = 16;

/**
 * `total` messages over the last 24 hours, five countries and `routeIds`, in a realistic mix of sent
 * and final statuses, by INSERT ... SELECT so that the statistics trigger fills the counters as for
 * the service's writes, from `connections` connections at once, so that each hour has as many
 * counter stripes as a service whose pools hold that many.
 */
export async function seedStatsMessages(pool: pg.Pool, accountId: string, routeIds: number[], total: number, connections = 1): Promise<void> {
  for (let start = 0; start < total; start += BATCH) {
    const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    try {
      await Promise.all(
        clients.map((client, part) =>
          client.query(
            `INSERT INTO messages (id, account_id, "to", "from", body, status, encoding, segments, cost, currency, country, route_id, attempts, error, reference,
                                   created_at, sent_at, delivered_at, failed_at)
             SELECT 'msg_T' || lpad(g::text, 23, '0'), $1, c.prefix || lpad((g % 100000)::text, 6, '0'), 'Bench', 'Your code is 482913.', s.status, 'GSM-7', 1,
                    CASE WHEN s.status = 'failed' THEN 0 ELSE 0.001 END, 'USD', c.country,
                    CASE WHEN s.status IN ('failed', 'pending') THEN NULL ELSE ($2::int[])[1 + g % array_length($2::int[], 1)] END, 1,
                    CASE s.status WHEN 'failed' THEN '{"type":"provider_error","code":"provider_rejected","message":"Refused."}'::jsonb
                                  WHEN 'undelivered' THEN '{"type":"provider_error","code":"undelivered","message":"Not delivered."}'::jsonb END,
                    'bench-stats', t.at, CASE WHEN s.status <> 'failed' THEN t.at + interval '200 ms' END,
                    CASE WHEN s.status = 'delivered' THEN t.at + interval '300 ms' + (g % 100) * interval '300 ms' END,
                    CASE WHEN s.status IN ('failed', 'undelivered') THEN t.at + interval '2 s' END
               FROM generate_series($3::int, $4::int) AS g,
                    LATERAL (SELECT CASE g % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'undelivered' WHEN 2 THEN 'sent' ELSE 'delivered' END AS status) AS s,
                    LATERAL (SELECT (ARRAY['US', 'GB', 'FR', 'DE', 'IN'])[1 + g % 5] AS country, (ARRAY['+12127', '+447400', '+336', '+49151', '+9198'])[1 + g % 5] AS prefix) AS c,
                    LATERAL (SELECT now() - interval '1 minute' - interval '23 hours' * (1 - g::float8 / $5) AS at) AS t
              WHERE g % $6 = $7`,
            [accountId, routeIds, start + 1, Math.min(start + BATCH, total), total, connections, part],
          ),
        ),
      );
    } finally {
      for (const client of clients) client.release();
    }
  }
  await countSeeded(pool, accountId, 'bench-stats');
}

type StatsAnswer = { from: string; to: string; totals: { messages: number; by_status: Record<string, number> } };
/** Whether an answer's totals equal a count over the account's messages of the range it reports. */
export async function statsTotalsExact(pool: pg.Pool, accountId: string, stats: StatsAnswer) {
  const { rows } = await pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM messages WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY status`,
    [accountId, stats.from, stats.to],
  );
  const counted = Object.fromEntries(rows.map((row) => [row.status, row.n]));
  const exact = Object.entries(stats.totals.by_status).every(([status, n]) => n === (counted[status] ?? 0));
  return { exact, answered: stats.totals.messages, counted: rows.reduce((sum, row) => sum + row.n, 0) };
}

/**
 * GET /stats and /admin/stats, each after a warm-up: p99s and exact totals. The seeding connections
 * stay open meanwhile, as a running service's do, so that this hour keeps their stripes; the hours
 * before are folded, as Dispatch's job does every ten minutes.
 */
export async function measureStats(bench: Bench): Promise<Measurement> {
  const { seededStatsMessages: seeded, listSeconds: seconds, warmupSeconds } = bench.options.durations;
  const tenant = await bench.tenant('stats', 10);
  const seedPool = new pg.Pool({ connectionString: bench.databaseUrl, max: SEED_STRIPES, idleTimeoutMillis: 0 });
  try {
    log(`stats: seeding ${count(seeded)} messages over the last 24 hours from ${SEED_STRIPES} connections, then VACUUM ANALYZE and CHECKPOINT`);
    await seedStatsMessages(seedPool, tenant.accountId, [bench.routeId], seeded, SEED_STRIPES);
    const db = connect(bench.databaseUrl, 2);
    await foldStatsStripes(db).finally(() => db.destroy());
    await settleSeed(bench.pool, ['messages', 'message_stats', 'message_stat_details']);
    const reads = [
      { name: 'GET /stats', path: '/stats', keys: tenant.keys },
      { name: 'by hour, route and country', path: '/stats?interval=hour&group_by=route,country', keys: tenant.keys },
      { name: 'GET /admin/stats by account', path: '/admin/stats?group_by=account', keys: [bench.adminToken] },
    ];
    const jobs = reads.map(({ path, keys }) => ({
      urls: bench.apiUrls(path),
      method: 'GET' as const,
      keys,
      connections: CONNECTIONS,
      durationSeconds: seconds,
    }));
    const results = await warmReads(jobs, warmupSeconds);
    const total = await statsTotalsExact(bench.pool, tenant.accountId, await bench.call('GET', '/stats', undefined, tenant.keys[0]));
    const what = `${reads.map(({ name }) => name).join(', ')}; ${count(seeded)} messages, ${CONNECTIONS} connections`;
    const measured = `${p99s(results)}; totals ${total.exact ? 'exact' : `${total.answered}, not ${total.counted}`}`;
    const pass = total.exact && results.every((result) => result.latency.p99 <= 50);
    const figures = { seeded, total, ...Object.fromEntries(reads.map(({ name }, i) => [name, { result: results[i] }])) };
    return { rows: [row('stats', what, measured, { goal: '<= 50 ms, totals exact', pass })], figures };
  } finally {
    await seedPool.end();
  }
}
