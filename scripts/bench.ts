/**
 * `npm run bench [-- --quick] [-- --processes N] [-- --worker-processes W]`: Dispatch measured
 * from outside, as issue 9's targets ask. PostgreSQL (embedded by default), the Dispatch
 * processes, a fake upstream and the load generator each run as their own process; the database
 * baselines (pgbench and a bare bulk transaction) run in the same run, so that every ratio
 * compares figures taken side by side on this machine. Prints the table of targets and writes
 * bench/results.json.
 */
import { mkdtemp } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { randomBase62 } from '../domain/ids.ts';
import { createBaselineTables, runPgbench, type PgbenchResult } from './bench/baselines.ts';
import { Bench, log, type Measurement, type Row } from './bench/context.ts';
import { startDispatchProcesses, type DispatchProcesses } from './bench/dispatch.ts';
import { measureAcceptAlone } from './bench/measure/accept-alone.ts';
import { measureAccountRead } from './bench/measure/account-read.ts';
import { prepareBigAccount } from './bench/measure/big-account.ts';
import { measureBulk } from './bench/measure/bulk.ts';
import { measureFloor } from './bench/measure/floor.ts';
import { measureLimits } from './bench/measure/limits.ts';
import { measureMessageList } from './bench/measure/message-list.ts';
import { measureOpenLoop } from './bench/measure/open-loop.ts';
import { measureOptOuts } from './bench/measure/opt-outs.ts';
import { measureSendThroughput } from './bench/measure/send-throughput.ts';
import { measureSoak } from './bench/measure/soak.ts';
import { measureStats } from './bench/measure/stats.ts';
import { measureTrickle } from './bench/measure/trickle.ts';
import { measureWebhookIsolation } from './bench/measure/webhook-isolation.ts';
import { parseOptions } from './bench/options.ts';
import { startDatabase, type BenchDatabase } from './bench/postgres.ts';
import { describeMachine, formatTable, writeResults } from './bench/report.ts';
import { Admin } from './bench/tenant.ts';
import { checkTotals } from './bench/totals.ts';
import { startUpstream, type Upstream } from './bench/upstream.ts';

const FULL_RESULTS = fileURLToPath(new URL('../bench/results.json', import.meta.url));

const options = (() => {
  try {
    return parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n`);
    process.exit(2);
  }
})();
const runDir = await mkdtemp(join(tmpdir(), 'dispatch-bench-'));
/** A quick run, a run of some targets only or at a rate of its own leaves the checked-in results of the last full run alone. */
const RESULTS = options.only === undefined && !options.quick && options.openLoopRate === undefined ? FULL_RESULTS : join(runDir, 'results.json');
const adminToken = `adm_${randomBase62(40)}`;
const rows: Row[] = [];
const figures: Record<string, unknown> = {};
let database: BenchDatabase | undefined;
let upstream: Upstream | undefined;
let dispatch: DispatchProcesses = { api: [], workers: [] };
let pool: pg.Pool | undefined;

const selected = (target: string) => options.only === undefined || options.only.has(target);

/** Runs one measurement unless --only leaves it out; a failure becomes a failed row and the bench goes on with the next. */
async function attempt<T extends Measurement>(target: string, what: string, measure: () => Promise<T>): Promise<T | undefined> {
  if (!selected(target)) return undefined;
  try {
    const measurement = await measure();
    rows.push(...measurement.rows);
    figures[target] = measurement.figures;
    return measurement;
  } catch (error) {
    log(`${target} failed: ${(error as Error).stack ?? String(error)}`);
    rows.push({ target, what, measured: `error: ${(error as Error).message.split('\n')[0]}`, baseline: '', ratio: '', goal: '', pass: false });
    return undefined;
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
  const workers = options.workerProcesses > 0 ? ` serving the API, ${options.workerProcesses} working the jobs` : '';
  log(`${options.quick ? 'quick' : 'full'} run, ${options.processes} Dispatch process(es)${workers}; logs in ${runDir}`);
  database = await startDatabase(options.databaseServer);
  upstream = await startUpstream(runDir);
  dispatch = await startDispatchProcesses(options.processes, options.workerProcesses, database.url, adminToken, runDir, options.cpuProfileDir);
  pool = new pg.Pool({ connectionString: database.url, max: 3 });
  const { rows: version } = await pool.query<{ server_version: string }>('SHOW server_version');
  const admin = new Admin(dispatch.api[0].baseUrl, adminToken);
  const bench = new Bench({
    options,
    dispatch,
    upstream,
    admin,
    pool,
    databaseUrl: database.url,
    routeId: await admin.createRoute(upstream.submitUrl),
    runDir,
  });
  await createBaselineTables(pool);

  let pgbench: PgbenchResult | undefined;
  if (selected('1') || selected('accept-alone') || selected('floor')) {
    log(`baseline: pgbench, 10 clients, ${options.durations.pgbenchSeconds} s`);
    try {
      pgbench = await runPgbench(database.url, options.durations.pgbenchSeconds, runDir);
    } catch (error) {
      log(`pgbench failed, target 1 has no baseline: ${(error as Error).message}`);
    }
  }
  figures.pgbench = pgbench;

  const sends = await attempt('1', 'POST /messages/send, closed loop', () => measureSendThroughput(bench, pgbench));
  // Half of target 1's maximum (a guess when target 1 failed, so that the rest still runs), unless asked for another.
  const rate = options.openLoopRate ?? Math.max(1, Math.round((sends?.acceptedPerSecond ?? 100) / 2));
  await attempt('2', 'POST /messages/send, open loop', () => measureOpenLoop(bench, rate));
  await attempt('cpu', 'machine CPU at a trickle', () => measureTrickle(bench));
  // A diagnosis of target 1's bound, where the workers run in processes of their own to pause.
  if (options.workerProcesses > 0 || options.only?.has('accept-alone'))
    await attempt('accept-alone', 'closed loop, workers paused', () => measureAcceptAlone(bench, pgbench));
  await attempt('floor', 'the floor server, closed loop', () => measureFloor(bench, pgbench));
  await attempt('3', 'GET /account', () => measureAccountRead(bench));
  await attempt('4', 'POST /messages/bulk', () => measureBulk(bench));
  const big = selected('5') || selected('6') ? prepareBigAccount(bench) : Promise.reject(new Error('not seeded'));
  big.catch(() => {}); // each of targets 5 and 6 reports a failed seeding
  await attempt('5', 'GET /messages', async () => measureMessageList(bench, await big));
  await attempt('6', 'limits O(1)', async () => measureLimits(bench, await big));
  await attempt('opt-outs', 'send with opt-outs', () => measureOptOuts(bench));
  await attempt('stats', 'GET /stats', () => measureStats(bench, adminToken));
  await attempt('webhooks', 'webhook isolation', () => measureWebhookIsolation(bench));
  await attempt('7', '10-minute open loop', () => measureSoak(bench, rate));
  await attempt('totals', 'totals', () => checkTotals(bench));

  const table = formatTable(rows);
  process.stdout.write(
    `\nDispatch bench, ${options.quick ? 'quick run' : 'full run'}, ${bench.describeProcesses()}, ${database.where}, ${started.toISOString()}, load average ${loadAverageAtStart.map((load) => load.toFixed(1)).join(' ')} at the start\n\n${table}\n\n`,
  );
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
