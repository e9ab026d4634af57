import pg from 'pg';
import { connect } from '../../../db/connection.ts';
import { foldStatsStripes } from '../../../domain/stats.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { count, ms, perSecond, refusals } from '../format.ts';
import { runLoad } from '../load.ts';
import { machineCpuRow, withMachineCpu } from '../machine-cpu.ts';
import { countSeeded, settleSeed } from '../message-log.ts';
import type { Tenant } from '../tenant.ts';

const CONNECTIONS = 8;
const COUNTRIES = [
  { country: 'US', prefix: '+12127' },
  { country: 'GB', prefix: '+447400' },
  { country: 'FR', prefix: '+336' },
  { country: 'DE', prefix: '+49151' },
  { country: 'IN', prefix: '+9198' },
];
const BATCH = 1_000_000;
/**
 * Connections the bench seeds from at once, each counting into its own stripe: about what one
 * Dispatch process's pools leave in an hour it was busy (the API's and the workers' ten each).
 */
const SEED_STRIPES = 16;

/**
 * `total` messages of `accountId` created evenly over the last 24 hours, over `routeIds` and five
 * countries, in a realistic mix of final and sent statuses (none pending: nothing would send them) with delivery latencies from 0.3 s to 30 s. One
 * INSERT ... SELECT per million rows, so that the statistics trigger fills the counters as it
 * does for the service's own writes (and its cost on a million-row statement shows in the log).
 * Each is split over `connections` connections writing at once, so that every hour's counters
 * have as many stripes as a service whose pools hold that many connections (the pool must allow
 * them). The account's counts by status are brought up to date after, as for the message list's.
 */
export async function seedStatsMessages(pool: pg.Pool, accountId: string, routeIds: number[], total: number, connections = 1): Promise<void> {
  for (let start = 0; start < total; start += BATCH) {
    const clients = await Promise.all(Array.from({ length: connections }, () => pool.connect()));
    try {
      await Promise.all(
        clients.map((client, part) =>
          client.query(
            `INSERT INTO messages (id, account_id, "to", "from", body, status, encoding, segments, cost, currency, country, route_id,
                                 attempts, error, reference, created_at, sent_at, delivered_at, failed_at)
           SELECT 'msg_T' || lpad(g::text, 23, '0'), $1, c.prefix || lpad((g % 100000)::text, 6, '0'), 'Bench', 'Your code is 482913.',
                  s.status, 'GSM-7', 1, CASE WHEN s.status = 'failed' THEN 0 ELSE 0.001 END, 'USD', c.country,
                  CASE WHEN s.status IN ('failed', 'pending') THEN NULL ELSE ($2::int[])[1 + g % array_length($2::int[], 1)] END, 1,
                  CASE s.status WHEN 'failed' THEN '{"type":"provider_error","code":"provider_rejected","message":"Refused."}'::jsonb
                                WHEN 'undelivered' THEN '{"type":"provider_error","code":"undelivered","message":"Not delivered."}'::jsonb END,
                  'bench-stats', t.at,
                  CASE WHEN s.status <> 'failed' THEN t.at + interval '200 ms' END,
                  CASE WHEN s.status = 'delivered' THEN t.at + interval '300 ms' + (g % 100) * interval '300 ms' END,
                  CASE WHEN s.status IN ('failed', 'undelivered') THEN t.at + interval '2 s' END
             FROM generate_series($3::int, $4::int) AS g,
                  LATERAL (SELECT CASE g % 20 WHEN 0 THEN 'failed' WHEN 1 THEN 'undelivered' WHEN 2 THEN 'sent' ELSE 'delivered' END AS status) AS s,
                  LATERAL (SELECT (ARRAY[${COUNTRIES.map(({ country }) => `'${country}'`).join(', ')}])[1 + g % ${COUNTRIES.length}] AS country,
                                  (ARRAY[${COUNTRIES.map(({ prefix }) => `'${prefix}'`).join(', ')}])[1 + g % ${COUNTRIES.length}] AS prefix) AS c,
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

/** The most stripes any group of the account's counters has in the last two hours, which no fold has taken yet. */
async function stripesOfLastHours(pool: pg.Pool, accountId: string): Promise<number> {
  const { rows } = await pool.query(
    `SELECT coalesce(max(n), 0)::int AS stripes FROM (
       SELECT count(*) AS n FROM message_stats WHERE account_id = $1 AND hour >= date_trunc('hour', now() AT TIME ZONE 'UTC') - interval '1 hour'
       GROUP BY hour, route_id, country) AS groups`,
    [accountId],
  );
  return rows[0].stripes;
}

/** Whether an answer's totals equal a count over the account's messages of the range it reports. */
export async function statsTotalsExact(
  pool: pg.Pool,
  accountId: string,
  stats: { from: string; to: string; totals: { messages: number; by_status: Record<string, number> } },
) {
  const { rows } = await pool.query(
    `SELECT status, count(*)::int AS n FROM messages WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 GROUP BY status`,
    [accountId, stats.from, stats.to],
  );
  const counted = Object.fromEntries(rows.map((row) => [row.status, row.n as number]));
  const exact = Object.entries(stats.totals.by_status).every(([status, n]) => n === (counted[status] ?? 0));
  return { exact, answered: stats.totals.messages, counted: rows.reduce((sum, row) => sum + (row.n as number), 0) };
}

/**
 * Seeds the account from `seedPool`'s connections, then folds as Dispatch's job (every ten
 * minutes) would have: the hours before this one into one stripe. This hour keeps the stripes of
 * the seeding connections, which stay open, as a running service's do, until the reads are done.
 */
async function seedAsServed(bench: Bench, seedPool: pg.Pool, accountId: string, seeded: number) {
  log(
    `stats: seeding ${count(seeded)} messages over the last 24 hours from ${SEED_STRIPES} connections (INSERT ... SELECT into messages: the trigger fills the counters), then VACUUM ANALYZE and CHECKPOINT`,
  );
  const started = Date.now();
  await seedStatsMessages(seedPool, accountId, [bench.routeId], seeded, SEED_STRIPES);
  const seedSeconds = Math.round((Date.now() - started) / 1000);
  const db = connect(bench.pool.options.connectionString as string, 2);
  const folded = await foldStatsStripes(db).finally(() => db.destroy());
  // Left to autovacuum, the seeded rows would be vacuumed during the measurement.
  await settleSeed(bench.pool, ['messages', 'message_stats', 'message_stat_details']);
  const stripes = await stripesOfLastHours(bench.pool, accountId);
  log(`  seeded in ${seedSeconds} s; ${count(folded)} counter rows folded; counter rows of the last two hours have ${stripes} stripes`);
  return { seeded, seedSeconds, seedStripes: SEED_STRIPES, folded, stripesOfLastHours: stripes };
}

/** GET /stats and GET /admin/stats over an account of 10,000,000 messages (50,000 with --quick), 8 connections, p99 of each after a warm-up of it, and the machine's CPU per request. */
export async function measureStats(bench: Bench, adminToken: string): Promise<Measurement> {
  const seeded = bench.options.durations.seededStatsMessages;
  const tenant = await bench.tenant('stats', 10);
  const seedPool = new pg.Pool({ connectionString: bench.pool.options.connectionString, max: SEED_STRIPES, idleTimeoutMillis: 0 });
  try {
    return await measureReads(bench, adminToken, tenant, await seedAsServed(bench, seedPool, tenant.accountId, seeded));
  } finally {
    await seedPool.end();
  }
}

/** The three reads, each after a warm-up of it, with the machine's CPU per request and a check of the totals. */
async function measureReads(bench: Bench, adminToken: string, tenant: Tenant, seed: Awaited<ReturnType<typeof seedAsServed>>): Promise<Measurement> {
  const { listSeconds: seconds, warmupSeconds } = bench.options.durations;
  const queries = [
    { name: 'GET /stats', path: '/stats', keys: tenant.keys },
    { name: 'GET /stats by hour, route and country', path: '/stats?interval=hour&group_by=route,country', keys: tenant.keys },
    { name: 'GET /admin/stats by account', path: '/admin/stats?group_by=account', keys: [adminToken] },
  ];
  const rows: Measurement['rows'] = [];
  const figures: Record<string, unknown> = { ...seed };
  for (const query of queries) {
    log(`stats: ${query.name}, ${CONNECTIONS} connections, ${seconds} s after a warm-up of ${warmupSeconds} s`);
    const job = { urls: bench.apiUrls(query.path), method: 'GET' as const, keys: query.keys, connections: CONNECTIONS, durationSeconds: seconds };
    await runLoad({ ...job, durationSeconds: warmupSeconds });
    const { value: result, cpu } = await withMachineCpu(() => runLoad(job));
    const answer = await fetch(bench.apiUrls(`/stats`)[0], { headers: { authorization: `Bearer ${tenant.keys[0]}` } });
    const total = await statsTotalsExact(bench.pool, tenant.accountId, ((await answer.json()) as { data: Parameters<typeof statsTotalsExact>[2] }).data);
    figures[query.name] = { result, total, cpu };
    rows.push({
      target: 'stats',
      what: `${query.name}, ${count(seed.seeded)} messages seeded by INSERT ... SELECT from ${SEED_STRIPES} connections (trigger-filled counters, past hours folded), ${CONNECTIONS} connections`,
      measured: `p99 ${ms(result.latency.p99)} (p50 ${ms(result.latency.p50)}, ${perSecond(result.okPerSecond, 'req')}${refusals(result)}); totals ${total.exact ? 'exact' : `${total.answered}, not ${total.counted}`}`,
      baseline: '',
      ratio: '',
      goal: '<= 50 ms, totals exact',
      pass: result.latency.p99 <= 50 && total.exact,
    });
    rows.push(machineCpuRow('stats', query.name, cpu, result.ok, 'request'));
  }
  return { rows, figures };
}
