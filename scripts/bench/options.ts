import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

/** What a run measures, in the order it measures them; `--only` takes these names. */
export const TARGETS = [
  'send',
  'open-loop',
  'floor',
  'account-read',
  'bulk',
  'list',
  'console',
  'limits',
  'opt-outs',
  'stats',
  'webhooks',
  'scheduled',
  'soak',
  'totals',
];

const FULL = {
  pgbenchSeconds: 15,
  warmupSeconds: 5,
  sendSeconds: 20,
  openLoopSeconds: 30,
  readSeconds: 10,
  bulkRuns: 7,
  /** The list's and the limits' account. */
  seededMessages: 1_000_000,
  listSeconds: 10,
  limitSeconds: 15,
  seededStatsMessages: 10_000_000,
  seededOptOuts: 1_000_000,
  optOutSeconds: 15,
  heldMessages: 1_000_000, // scheduled a month ahead, beside those falling due within one second
  dueMessages: 10_000,
  soakSeconds: 600,
  /** The soak compares its first and last window of this length. */
  soakWindowSeconds: 60,
};

// What a statistics read costs does not grow with the seed, and a million takes most of a minute.
const QUICK: typeof FULL = {
  ...FULL,
  ...{ pgbenchSeconds: 3, warmupSeconds: 1, sendSeconds: 4, openLoopSeconds: 4, readSeconds: 2, bulkRuns: 3, listSeconds: 1, limitSeconds: 2 },
  ...{ seededMessages: 50_000, seededStatsMessages: 50_000, seededOptOuts: 50_000, optOutSeconds: 2, soakSeconds: 0, heldMessages: 10_000 },
};

const USAGE = `npm run bench -- [--quick] [--processes N] [--worker-processes W] [--database-url] [--soak-seconds S] [--only T,...] [--cpu-prof DIR] [--open-loop-rate R]
  --quick               about a minute: shorter loads, 50,000 seeded rows, no soak; results in the run's log directory
  --processes N         N Dispatch processes serving the API on one database (default 1)
  --worker-processes W  W more that only work the jobs (DISPATCH_ROLE=worker); with 0, the API processes work them
  --database-url        a fresh database on DATABASE_URL's server instead of an embedded PostgreSQL
  --soak-seconds S      the soak's length (default 600; 0 skips it)
  --only T,...          only these (${TARGETS.join(', ')}); without send, the open loops run at 50/s
  --cpu-prof DIR        each Dispatch process writes DIR/<process>.cpuprofile when the run ends
  --open-loop-rate R    the open loop and the soak at R sends a second instead of half of send's rate`;

/** A flag's value as a whole number from `min` to `max`, or `fallback` when it was not given. */
function wholeNumber<T>(flag: string, text: string | undefined, fallback: T, min: number, max = Number.POSITIVE_INFINITY): number | T {
  const value = Number(text);
  if (text !== undefined && (!Number.isInteger(value) || value < min || value > max))
    throw new Error(`${flag} must be a whole number from ${min}${max === Number.POSITIVE_INFINITY ? ' up' : ` to ${max}`}, got ${text}\n${USAGE}`);
  return text === undefined ? fallback : value;
}

export type Options = ReturnType<typeof parseOptions>;
export function parseOptions(argv: string[]) {
  const [text, flag] = [{ type: 'string' }, { type: 'boolean' }] as const;
  const flags = { quick: flag, 'database-url': flag, help: flag, processes: text, 'worker-processes': text, 'soak-seconds': text, only: text };
  const { values } = parseArgs({ args: argv, options: { ...flags, 'cpu-prof': text, 'open-loop-rate': text } });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values['database-url'] && !process.env.DATABASE_URL) throw new Error('--database-url needs DATABASE_URL to be set');
  const durations = { ...(values.quick ? QUICK : FULL) };
  if (values['soak-seconds'] !== undefined) {
    durations.soakSeconds = wholeNumber('--soak-seconds', values['soak-seconds'], 0, 0);
    durations.soakWindowSeconds = Math.min(durations.soakWindowSeconds, Math.max(1, Math.floor(durations.soakSeconds / 4)));
  }
  const only = values.only === undefined ? undefined : new Set(values.only.split(','));
  const unknown = [...(only ?? [])].filter((target) => !TARGETS.includes(target));
  if (unknown.length > 0) throw new Error(`--only names unknown targets: ${unknown.join(', ')}\n${USAGE}`);
  return {
    quick: values.quick === true,
    processes: wholeNumber('--processes', values.processes, 1, 1, 8),
    workerProcesses: wholeNumber('--worker-processes', values['worker-processes'], 0, 0, 8),
    databaseServer: values['database-url'] ? process.env.DATABASE_URL : undefined,
    durations,
    /** Undefined: every target. */
    only,
    cpuProfileDir: values['cpu-prof'] === undefined ? undefined : resolve(values['cpu-prof']),
    /** Undefined: half of the send closed loop's rate. */
    openLoopRate: wholeNumber('--open-loop-rate', values['open-loop-rate'], undefined, 1),
  };
}
