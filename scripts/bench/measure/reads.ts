/** The reads: an authenticated read against /healthz, and the pages of an account of `seededMessages` messages. */
import { chromium } from 'playwright-core';
import type { Bench } from '../context.ts';
import { latency, runLoad, warmReads } from '../load.ts';
import { seedMessages } from '../message-log.ts';
import { count, log, ms, p99s, perSecond, ratio, refusals, row, type Measurement } from '../report.ts';

/** GET /account (authentication, rate limit, one read) against GET /healthz of the same processes, both closed loops of 32 connections. */
export async function measureAccountRead(bench: Bench): Promise<Measurement> {
  const [tenant, durationSeconds] = [await bench.tenant('account-read'), bench.options.durations.readSeconds];
  const healthz = bench.dispatch.api.map(({ origin }) => `${origin}/healthz`);
  const health = await runLoad({ urls: healthz, method: 'GET', keys: [], connections: 32, durationSeconds });
  const account = await runLoad({ urls: bench.apiUrls('/account'), method: 'GET', keys: tenant.keys, connections: 32, durationSeconds });
  const share = account.okPerSecond / health.okPerSecond;
  const cells = { baseline: `GET /healthz ${perSecond(health.okPerSecond, 'req')}`, ratio: ratio(share), goal: '>= 0.30', pass: share >= 0.3 };
  const measured = `${perSecond(account.okPerSecond, 'req')} (p99 ${ms(account.latency.p99)}${refusals(account)})`;
  return { rows: [row('account-read', 'GET /account, closed loop, 32 connections, 50 keys', measured, cells)], figures: { health, account } };
}

export type BigAccount = Awaited<ReturnType<typeof prepareBigAccount>>;
const TO = '+12127000042';
/** The pages measured, and the SQL that counts what each one's `pagination.total` must say. */
const PAGES = [
  { name: 'first page', query: '', where: '', params: [] as string[] },
  { name: 'status filter', query: '?status=delivered', where: `AND status = $2`, params: ['delivered'] },
  { name: 'to filter', query: `?to=${encodeURIComponent(TO)}`, where: `AND "to" = $2`, params: [TO] },
  { name: 'page 1,000', query: '?page=1000', where: '', params: [] as string[] },
];

/** Its keys have daily and monthly limits that never refuse: one has sent nothing this month, the other the seeded messages. */
export async function prepareBigAccount(bench: Bench) {
  const seeded = bench.options.durations.seededMessages;
  const tenant = await bench.tenant('big-account');
  const [fresh, busy] = await bench.createKeys(tenant.accountId, 2, { daily_limit: 2_000_000_000, monthly_limit: 2_000_000_000 });
  log(`list, limits: seeding ${count(seeded)} messages this month through one key (plain SQL), then VACUUM ANALYZE and CHECKPOINT`);
  await seedMessages(bench.pool, tenant.accountId, busy.id, seeded);
  return { tenant, seeded, freshKey: fresh.plain_key, busyKey: busy.plain_key };
}

/** GET /messages on the big account, each page after a warm-up of it: its p99, and whether its total is exact. */
export async function measureList(bench: Bench, big: BigAccount): Promise<Measurement> {
  const { listSeconds: durationSeconds, warmupSeconds } = bench.options.durations;
  const [keys, accountId] = [big.tenant.keys, big.tenant.accountId];
  const jobs = PAGES.map(({ query }) => ({ urls: bench.apiUrls(`/messages${query}`), method: 'GET' as const, keys, connections: 8, durationSeconds }));
  const results = await warmReads(jobs, warmupSeconds);
  const totals = await Promise.all(
    PAGES.map(async ({ where, params }, i) => {
      const page = (await (await fetch(jobs[i].urls[0], { headers: { authorization: `Bearer ${keys[0]}` } })).json()) as { pagination: { total: number } };
      const { rows } = await bench.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 ${where}`, [accountId, ...params]);
      return { answered: page.pagination.total, counted: rows[0].n };
    }),
  );
  const exact = totals.every(({ answered, counted }) => answered === counted);
  const what = `GET /messages, ${count(big.seeded)} messages: ${PAGES.map(({ name }) => name).join(', ')}; 8 connections`;
  const pass = exact && results.every((result) => result.latency.p99 <= 50);
  const figures = Object.fromEntries(PAGES.map(({ name }, i) => [name, { result: results[i], total: totals[i] }]));
  return { rows: [row('list', what, `${p99s(results)}; totals ${exact ? 'exact' : 'NOT exact'}`, { goal: '<= 50 ms, totals exact', pass })], figures };
}

/**
 * Cold loads of the console's messages view of the big account in Debian's Chromium: each in a new
 * profile (nothing cached), signed in as the console keeps it, timed from navigation to the first row.
 */
export async function measureConsoleLoad(bench: Bench, big: BigAccount): Promise<Measurement> {
  const args = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args });
  const session = JSON.stringify({ kind: 'customer', token: big.tenant.keys[0], label: 'bench', scopes: null });
  const timings: number[] = [];
  try {
    for (let run = 0; run < 5; run++) {
      const context = await browser.newContext();
      await context.addInitScript((stored) => sessionStorage.setItem('dispatch.console.session', stored), session);
      const [page, started] = [await context.newPage(), performance.now()];
      await page.goto(`${bench.dispatch.api[0].origin}/console/messages`);
      await page.locator('tbody tr').first().waitFor({ timeout: 30_000 });
      timings.push(performance.now() - started);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  const { p50, max } = latency(timings);
  const what = `the console's messages view, cold, ${count(big.seeded)} messages: navigation to the first row (5 loads)`;
  return { rows: [row('console', what, `p50 ${ms(p50)}, max ${ms(max)}`, { goal: '<= 1 s', pass: max <= 1000 })], figures: { timings } };
}
