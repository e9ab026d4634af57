import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export interface Durations {
  pgbenchSeconds: number;
  warmupSeconds: number;
  /** Target 1's closed loop. */
  sendSeconds: number;
  /** Target 2's open loop. */
  openLoopSeconds: number;
  /** Target 3: each of GET /healthz and GET /account. */
  readSeconds: number;
  /** Target 4: bulk requests timed (after one warm-up), and as many bare transactions. */
  bulkRuns: number;
  /** Target 5: messages seeded into the big account (also target 6's N). */
  seededMessages: number;
  /** Target 5: each of the four list queries. */
  listSeconds: number;
  /** Target 6: each of the two keys. */
  limitSeconds: number;
  /** The statistics targets: messages seeded into their account. */
  seededStatsMessages: number;
  /** Issue 10: opt-outs seeded into one account. */
  seededOptOuts: number;
  /** Issue 10: each of the two accounts' sends. */
  optOutSeconds: number;
  /** Target 7's open loop; 0 skips it. */
  soakSeconds: number;
  /** Target 7 compares the first and the last window of this length. */
  soakWindowSeconds: number;
}

export interface Options {
  quick: boolean;
  /** Dispatch processes serving the API, sharing the database, behind the load generator. */
  processes: number;
  /** Dispatch processes working the jobs only (DISPATCH_ROLE=worker); with 0, the API processes work them too. */
  workerProcesses: number;
  /** Use a fresh database on DATABASE_URL's server instead of an embedded PostgreSQL. */
  databaseServer: string | undefined;
  durations: Durations;
  /** The targets to measure (as the table names them: 1 to 7, opt-outs, stats, totals); all when undefined. */
  only: Set<string> | undefined;
  /** Where each Dispatch process writes its CPU profile (Node's --cpu-prof) when the run ends; none when undefined. */
  cpuProfileDir: string | undefined;
  /** Targets 2 and 7 at this many sends a second instead of half of target 1's maximum; undefined for the targets' own rate. */
  openLoopRate: number | undefined;
}

export const TARGETS = ['1', '2', 'cpu', 'accept-alone', 'floor', '3', '4', '5', '6', 'opt-outs', 'stats', 'webhooks', '7', 'totals'];

const FULL: Durations = {
  pgbenchSeconds: 15,
  warmupSeconds: 5,
  sendSeconds: 20,
  openLoopSeconds: 30,
  readSeconds: 10,
  bulkRuns: 7,
  seededMessages: 1_000_000,
  seededStatsMessages: 10_000_000,
  listSeconds: 10,
  limitSeconds: 15,
  seededOptOuts: 1_000_000,
  optOutSeconds: 15,
  soakSeconds: 600,
  soakWindowSeconds: 60,
};

/** About a minute: shorter runs, 50,000 seeded messages, opt-outs and statistics' messages, no 10-minute run. */
const QUICK: Durations = {
  pgbenchSeconds: 3,
  warmupSeconds: 1,
  sendSeconds: 4,
  openLoopSeconds: 4,
  readSeconds: 2,
  bulkRuns: 3,
  seededMessages: 50_000,
  // What the statistics read does not grow with the seed; a million took 43 s.
  seededStatsMessages: 50_000,
  listSeconds: 1,
  limitSeconds: 2,
  seededOptOuts: 50_000,
  optOutSeconds: 2,
  soakSeconds: 0,
  soakWindowSeconds: 60,
};

const USAGE = `npm run bench -- [--quick] [--processes N] [--worker-processes W] [--database-url] [--soak-seconds S] [--only T,...] [--cpu-prof DIR] [--open-loop-rate R]
  --quick          about a minute: shorter runs, 50,000 seeded messages, opt-outs and statistics'
                   messages, target 7 skipped; results in the run's log directory
  --processes N    N Dispatch processes serving the API on the same database behind the load
                   generator (default 1)
  --worker-processes W
                   W Dispatch processes beside them that only work the jobs, DISPATCH_ROLE=worker
                   (default 0: each API process works them too, DISPATCH_ROLE=all); with W, the
                   run also measures accept-alone: target 1's loop with the workers paused
  --database-url   run on a fresh database of DATABASE_URL's server (default: an embedded PostgreSQL)
  --soak-seconds S length of target 7's run (default 600, 0 skips it)
  --only T,...     only these targets (${TARGETS.join(', ')}); without 1, target 2 runs at a guessed 50/s
                   (or at --open-loop-rate)
  --cpu-prof DIR   each Dispatch process writes its CPU profile to DIR/<process>.cpuprofile when the
                   run ends (Node's --cpu-prof; open it in Chrome's DevTools)
  --open-loop-rate R
                   targets 2 and 7 at R sends a second instead of half of target 1's maximum, to
                   find the rate up to which the machine holds target 2's latencies; such a run
                   leaves bench/results.json alone`;

/** A flag's value as a whole number from `min` to `max`, or an error that names the flag. */
function wholeNumber(flag: string, text: string, min: number, max = Number.POSITIVE_INFINITY): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max)
    throw new Error(`${flag} must be a whole number from ${min}${max === Number.POSITIVE_INFINITY ? ' up' : ` to ${max}`}, got ${text}\n${USAGE}`);
  return value;
}

export function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      processes: { type: 'string', default: '1' },
      'worker-processes': { type: 'string', default: '0' },
      'database-url': { type: 'boolean', default: false },
      'soak-seconds': { type: 'string' },
      only: { type: 'string' },
      'cpu-prof': { type: 'string' },
      'open-loop-rate': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const processes = wholeNumber('--processes', values.processes, 1, 8);
  const workerProcesses = wholeNumber('--worker-processes', values['worker-processes'], 0, 8);
  if (values['database-url'] && !process.env.DATABASE_URL) throw new Error('--database-url needs DATABASE_URL to be set');
  const durations = { ...(values.quick ? QUICK : FULL) };
  if (values['soak-seconds'] !== undefined) {
    durations.soakSeconds = wholeNumber('--soak-seconds', values['soak-seconds'], 0);
    durations.soakWindowSeconds = Math.min(durations.soakWindowSeconds, Math.max(1, Math.floor(durations.soakSeconds / 4)));
  }
  const only = values.only === undefined ? undefined : new Set(values.only.split(','));
  const unknown = [...(only ?? [])].filter((target) => !TARGETS.includes(target));
  if (unknown.length > 0) throw new Error(`--only names unknown targets: ${unknown.join(', ')}\n${USAGE}`);
  const cpuProfileDir = values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']);
  const openLoopRate = values['open-loop-rate'] === undefined ? undefined : wholeNumber('--open-loop-rate', values['open-loop-rate'], 1);
  return {
    quick: values.quick,
    processes,
    workerProcesses,
    databaseServer: values['database-url'] ? process.env.DATABASE_URL : undefined,
    durations,
    only,
    cpuProfileDir,
    openLoopRate,
  };
}
