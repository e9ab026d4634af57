/**
 * `npm run bench [-- --quick]`: Dispatch measured from outside. PostgreSQL (embedded by default), the
 * Dispatch processes, a fake upstream and the load generator each run as a process of their own; the
 * database baselines (pgbench, a bare bulk transaction) run in the same run, so that every ratio
 * compares figures taken side by side on this machine. Prints the table and writes bench/results.json
 * (BENCHMARKS.md has the method).
 */
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { randomBase62 } from '../domain/ids.ts';
import { createBaselineTables, runPgbench, type PgbenchResult } from './bench/baselines.ts';
import { createBench } from './bench/context.ts';
import { measureBulk } from './bench/measure/bulk.ts';
import { measureFloor } from './bench/measure/floor.ts';
import { measureOpenLoop, measureSoak } from './bench/measure/open-loop.ts';
import { measureLimits, measureOptOuts } from './bench/measure/paired-sends.ts';
import { measureAccountRead, measureConsoleLoad, measureList, prepareBigAccount } from './bench/measure/reads.ts';
import { measureSend } from './bench/measure/send.ts';
import { measureScheduled } from './bench/measure/scheduled.ts';
import { measureStats } from './bench/measure/stats.ts';
import { measureWebhooks } from './bench/measure/webhooks.ts';
import { parseOptions } from './bench/options.ts';
import { startDatabase, type BenchDatabase } from './bench/postgres.ts';
import { describeProcesses, startDispatchProcesses, startUpstream, type DispatchProcesses, type Upstream } from './bench/processes.ts';
import { describeMachine, formatTable, log, row, writeResults, type Measurement, type Row } from './bench/report.ts';
import { checkTotals } from './bench/totals.ts';

const options = (() => {
  try {
    return parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const runDir = await mkdtemp(join(tmpdir(), 'dispatch-bench-'));
// Only a full run of every target at its own rate replaces the checked-in figures.
const partial = options.only !== undefined || options.quick || options.openLoopRate !== undefined;
const RESULTS = partial ? join(runDir, 'results.json') : fileURLToPath(new URL('../bench/results.json', import.meta.url));
const adminToken = `adm_${randomBase62(40)}`;
const rows: Row[] = [];
const figures: Record<string, unknown> = {};
let database: BenchDatabase | undefined;
let upstream: Upstream | undefined;
let dispatch: DispatchProcesses = { api: [], workers: [] };
let pool: pg.Pool | undefined;

const selected = (target: string) => options.only === undefined || options.only.has(target);

/** One measurement unless --only leaves it out; a failure becomes a failed row, and the run goes on. */
async function attempt<T extends Measurement>(target: string, what: string, measure: () => Promise<T>): Promise<T | undefined> {
  if (!selected(target)) return undefined;
  log(`${target}: ${what}`);
  try {
    const measurement = await measure();
    rows.push(...measurement.rows);
    figures[target] = measurement.figures;
    return measurement;
  } catch (error) {
    log(`${target} failed: ${(error as Error).stack ?? String(error)}`);
    rows.push(row(target, what, `error: ${(error as Error).message.split('\n')[0]}`, { pass: false }));
  }
}

async function stopAll(): Promise<void> {
  await pool?.end();
  await Promise.all([...dispatch.api, ...dispatch.workers].map((instance) => instance.process.stop()));
  await upstream?.process.stop();
  await database?.stop();
}

process.once('SIGINT', () => void stopAll().finally(() => process.exit(130)));

try {
  const started = new Date();
  const loadAverageAtStart = loadavg();
  log(`${options.quick ? 'quick' : 'full'} run; logs in ${runDir}`);
  database = await startDatabase(options.databaseServer);
  upstream = await startUpstream(runDir);
  dispatch = await startDispatchProcesses(options, { DATABASE_URL: database.url, ADMIN_TOKEN: adminToken }, runDir);
  pool = new pg.Pool({ connectionString: database.url, max: 3 });
  const { rows: version } = await pool.query<{ server_version: string }>('SHOW server_version');
  const bench = await createBench({ options, dispatch, upstream, pool, databaseUrl: database.url, adminToken, runDir });
  await createBaselineTables(pool);

  let pgbench: PgbenchResult | undefined;
  if (selected('send') || selected('floor')) {
    log(`baseline: pgbench, 10 clients, ${options.durations.pgbenchSeconds} s`);
    pgbench = await runPgbench(database.url, options.durations.pgbenchSeconds, runDir).catch((error: Error) => void log(`pgbench failed: ${error.message}`));
  }
  figures.pgbench = pgbench;

  const sends = await attempt('send', 'POST /messages/send, closed loop', () => measureSend(bench, pgbench));
  // Half of the closed loop's rate; a guess when it did not run, so that the rest still does.
  const rate = options.openLoopRate ?? Math.max(1, Math.round((sends?.acceptedPerSecond ?? 100) / 2));
  await attempt('open-loop', 'POST /messages/send, open loop', () => measureOpenLoop(bench, rate));
  await attempt('floor', 'the floor server, closed loop', () => measureFloor(bench, pgbench));
  await attempt('account-read', 'GET /account', () => measureAccountRead(bench));
  await attempt('bulk', 'POST /messages/bulk', () => measureBulk(bench));
  const big = selected('list') || selected('console') || selected('limits') ? prepareBigAccount(bench) : Promise.reject(new Error('not seeded'));
  big.catch(() => {}); // each of its measurements reports a failed seed
  await attempt('list', 'GET /messages', async () => measureList(bench, await big));
  await attempt('console', 'the console, cold', async () => measureConsoleLoad(bench, await big));
  await attempt('limits', 'send through a key with limits', async () => measureLimits(bench, await big));
  await attempt('opt-outs', 'send with opt-outs', () => measureOptOuts(bench));
  await attempt('stats', 'GET /stats', () => measureStats(bench));
  await attempt('webhooks', 'webhook isolation', () => measureWebhooks(bench));
  await attempt('scheduled', 'scheduled sends falling due', () => measureScheduled(bench));
  await attempt('soak', 'open loop, soak', () => measureSoak(bench, rate));
  await attempt('totals', 'totals', () => checkTotals(bench));

  const load = loadAverageAtStart.map((average) => average.toFixed(1)).join(' ');
  const title = `Dispatch bench, ${options.quick ? 'quick' : 'full'} run, ${describeProcesses(dispatch)}, ${database.where}, ${started.toISOString()}`;
  process.stdout.write(`\n${title}, load average ${load} at the start\n\n${formatTable(rows)}\n\n`);
  await writeResults(RESULTS, {
    generated_at: started.toISOString(),
    finished_at: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    processes: options.processes,
    worker_processes: options.workerProcesses,
    database: database.where,
    machine: describeMachine(version[0].server_version, loadAverageAtStart),
    durations: options.durations,
    rows,
    figures,
  });
  log(`wrote ${RESULTS}`);
} finally {
  await stopAll();
}
