import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { ARTIFACTS } from './dispatch-process.ts';
import type { CallOutcome } from './timed-call.ts';

/**
 * The figures RELIABILITY.md reports, fed by each chaos test with what it measured for its own
 * assertions, and written at the end of the run (root-hooks.ts) to test-artifacts/chaos/figures.json
 * and figures.md. A figure a test never reached (it failed before measuring it) stays absent, so
 * that a missing figure reads as "not measured", never as zero.
 */

export interface LoadFigures {
  attempted: number;
  answered_201: number;
  answered_503: number;
  /** The contract gives every 503 a Retry-After. */
  answered_503_without_retry_after: number;
  /** Any 5xx but 503: never expected. */
  other_5xx: number;
  /** Answered with a 2xx other than 201 or a 4xx (a 409 while an Idempotency-Key's first claim is held). */
  other_answers: number;
  /** No answer within the request's deadline. */
  hangs: number;
  /** Connection refused or cut before any answer (the process was killed). */
  cut: number;
  /** An answer openapi.yaml does not allow. */
  off_contract: number;
}

export interface MessageFigures {
  accepted: number;
  /** Answered 201 and no row. */
  without_row: number;
  /** A row that never reached the state the rules give it (final, or `sent` awaiting its report). */
  not_final: number;
  /** Submitted more than once to a route that is not idempotent, or to two routes without failover_on_timeout. */
  duplicated: number;
  /** Pending with no live send job. */
  stranded: number;
}

export interface FuzzFigures {
  valid: number;
  mutated: number;
  five_xx: number;
  off_contract: number;
}

export interface ScenarioFigures {
  load?: LoadFigures;
  /** Faults injected, by kind. */
  faults: Record<string, number>;
  database_down_ms?: number;
  fuzz?: FuzzFigures;
  messages?: Partial<MessageFigures>;
  events?: { emitted?: number; not_delivered?: number };
  reports?: { posted?: number; lost?: number };
  /** Anything else the scenario measured (latencies, sizes), by name. */
  measures: Record<string, number | string>;
}

const emptyLoad = (): LoadFigures => ({
  attempted: 0,
  answered_201: 0,
  answered_503: 0,
  answered_503_without_retry_after: 0,
  other_5xx: 0,
  other_answers: 0,
  hangs: 0,
  cut: 0,
  off_contract: 0,
});

function loadKey(status: number): keyof LoadFigures {
  if (status === 201) return 'answered_201';
  if (status === 503) return 'answered_503';
  return status >= 500 ? 'other_5xx' : 'other_answers';
}

/** One scenario's figures; every method adds to what was recorded, or replaces a measured value. */
export class Scenario {
  readonly figures: ScenarioFigures = { faults: {}, measures: {} };

  /** A request answered with `status` (and `headers`, where a 503's Retry-After can be checked). */
  answer(status: number, headers?: Headers): void {
    const load = (this.figures.load ??= emptyLoad());
    load.attempted += 1;
    load[loadKey(status)] += 1;
    if (status === 503 && !/^[1-9]\d*$/.test(headers?.get('retry-after') ?? '')) load.answered_503_without_retry_after += 1;
  }

  /** Requests made with timedCall, whatever became of them. */
  outcomes(outcomes: CallOutcome[]): void {
    for (const outcome of outcomes) {
      if (outcome.kind === 'answer') {
        this.answer(outcome.status, outcome.headers);
        continue;
      }
      const load = (this.figures.load ??= emptyLoad());
      load.attempted += 1;
      load[outcome.kind === 'timeout' ? 'hangs' : outcome.kind === 'connection' ? 'cut' : 'off_contract'] += 1;
    }
  }

  fault(kind: string, count = 1): void {
    this.figures.faults[kind] = (this.figures.faults[kind] ?? 0) + count;
  }

  databaseDown(ms: number): void {
    this.figures.database_down_ms = (this.figures.database_down_ms ?? 0) + ms;
  }

  fuzz(counts: FuzzFigures): void {
    const fuzz = (this.figures.fuzz ??= { valid: 0, mutated: 0, five_xx: 0, off_contract: 0 });
    for (const key of Object.keys(fuzz) as (keyof FuzzFigures)[]) fuzz[key] += counts[key];
  }

  /** The latest measure of each figure given wins: a polling check records every poll, and its last is what the test ended on. */
  messages(measured: Partial<MessageFigures>): void {
    this.figures.messages = { ...this.figures.messages, ...measured };
  }

  /** Adds to the counts so far, for a scenario of several cases. */
  addMessages(counts: Partial<MessageFigures>): void {
    const messages = (this.figures.messages ??= {});
    for (const [key, count] of Object.entries(counts) as [keyof MessageFigures, number][]) messages[key] = (messages[key] ?? 0) + count;
  }

  events(measured: { emitted?: number; not_delivered?: number }): void {
    this.figures.events = { ...this.figures.events, ...measured };
  }

  reports(measured: { posted?: number; lost?: number }): void {
    this.figures.reports = { ...this.figures.reports, ...measured };
  }

  measure(name: string, value: number | string): void {
    this.figures.measures[name] = value;
  }

  /** Adds to a count measured case by case. */
  tally(name: string, count: number): void {
    this.figures.measures[name] = Number(this.figures.measures[name] ?? 0) + count;
  }
}

const scenarios = new Map<string, Scenario>();
const failedTests: string[] = [];
const startedAt = new Date();
const loadAtStart = loadavg();

/** The scenario's recorder, created on first use; scenarios are reported in that order. */
export function scenario(name: string): Scenario {
  let found = scenarios.get(name);
  if (!found) scenarios.set(name, (found = new Scenario()));
  return found;
}

export function testFailed(title: string): void {
  failedTests.push(title);
}

const sum = (values: (number | undefined)[]) => values.reduce<number>((total, value) => total + (value ?? 0), 0);

/**
 * A scenario's share of the figures. A 503 counts as a 5xx seen unless the scenario took
 * the database down, when the contract asks for exactly that answer.
 */
function headline(figures: ScenarioFigures) {
  const unexpected503 = figures.database_down_ms === undefined ? (figures.load?.answered_503 ?? 0) : 0;
  return {
    requests: (figures.load?.attempted ?? 0) + (figures.fuzz ? figures.fuzz.valid + figures.fuzz.mutated : 0),
    faults: sum(Object.values(figures.faults)),
    hostile: figures.fuzz?.mutated ?? 0,
    five_xx: (figures.load?.other_5xx ?? 0) + unexpected503 + (figures.fuzz?.five_xx ?? 0),
    off_contract: (figures.load?.off_contract ?? 0) + (figures.fuzz?.off_contract ?? 0),
    lost: sum([figures.messages?.without_row, figures.messages?.not_final]),
    duplicated: figures.messages?.duplicated ?? 0,
    stranded: figures.messages?.stranded ?? 0,
    events_not_delivered: figures.events?.not_delivered ?? 0,
    reports_lost: figures.reports?.lost ?? 0,
  };
}

type Headline = ReturnType<typeof headline>;

function totals(all: Headline[]): Headline {
  const total = headline({ faults: {}, measures: {} });
  for (const figures of all) for (const key of Object.keys(total) as (keyof Headline)[]) total[key] += figures[key];
  return total;
}

const shown = (value: number | string | undefined) =>
  value === undefined ? 'not measured' : typeof value === 'number' ? value.toLocaleString('en-US') : value;

/** One markdown table per scenario, of the figures it recorded. */
function scenarioTable(name: string, figures: ScenarioFigures): string {
  const rows: [string, number | string | undefined][] = [];
  if (figures.load) {
    const load = figures.load;
    rows.push(['requests sent', load.attempted], ['answered 201', load.answered_201], ['answered 503', load.answered_503]);
    if (load.answered_503) rows.push(['of which without Retry-After', load.answered_503_without_retry_after]);
    rows.push(['other 5xx', load.other_5xx]);
    if (load.other_answers) rows.push(['other answers (4xx)', load.other_answers]);
    rows.push(['hangs (no answer by the deadline)', load.hangs]);
    if (load.cut) rows.push(['connections cut (the kill)', load.cut]);
    rows.push(['answers off openapi.yaml', load.off_contract]);
  }
  for (const [kind, count] of Object.entries(figures.faults)) rows.push([`fault: ${kind}`, count]);
  if (figures.database_down_ms !== undefined) rows.push(['database down (ms)', figures.database_down_ms]);
  if (figures.fuzz) {
    const fuzz = figures.fuzz;
    rows.push(
      ['requests valid by the document', fuzz.valid],
      ['hostile (mutated) requests', fuzz.mutated],
      ['5xx seen', fuzz.five_xx],
      ['answers off openapi.yaml', fuzz.off_contract],
    );
  }
  if (figures.messages) {
    const messages = figures.messages;
    rows.push(
      ['messages accepted', messages.accepted],
      ['lost: accepted, no row', messages.without_row],
      ['lost: never reached its state', messages.not_final],
      ['duplicated', messages.duplicated],
    );
    if (messages.stranded !== undefined) rows.push(['stranded (pending, no live job)', messages.stranded]);
  }
  if (figures.events) rows.push(['events emitted', figures.events.emitted], ['events not delivered', figures.events.not_delivered]);
  if (figures.reports) rows.push(['delivery reports posted', figures.reports.posted], ['delivery reports lost', figures.reports.lost]);
  for (const [measure, value] of Object.entries(figures.measures)) rows.push([measure, value]);
  return [`### ${name}`, '', '| figure | value |', '|---|---:|', ...rows.map(([figure, value]) => `| ${figure} | ${shown(value)} |`)].join('\n');
}

/** Writes figures.json and figures.md, and prints one line per scenario; does nothing when no chaos test recorded a figure. */
export async function writeFigures(): Promise<void> {
  if (scenarios.size === 0) return;
  const all = [...scenarios].map(([name, recorded]) => [name, recorded.figures] as [string, ScenarioFigures]);
  const headlines = all.map(([name, figures]) => [name, headline(figures)] as [string, Headline]);
  const report = {
    started_at: startedAt.toISOString(),
    ended_at: new Date().toISOString(),
    command: process.env.npm_lifecycle_event ? `npm run ${process.env.npm_lifecycle_event}` : process.argv.slice(1).join(' '),
    machine: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model,
      kernel: release(),
      node: process.version,
      load_average_at_start: loadAtStart,
      load_average_at_end: loadavg(),
    },
    failed_tests: failedTests,
    totals: totals(headlines.map(([, figures]) => figures)),
    scenarios: Object.fromEntries(all.map(([name, figures]) => [name, { ...figures, headline: headline(figures) }])),
  };
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(join(ARTIFACTS, 'figures.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(ARTIFACTS, 'figures.md'), `${all.map(([name, figures]) => scenarioTable(name, figures)).join('\n\n')}\n`);

  const columns: [string, keyof Headline][] = [
    ['requests', 'requests'],
    ['faults', 'faults'],
    ['hostile', 'hostile'],
    ['5xx', 'five_xx'],
    ['off-doc', 'off_contract'],
    ['lost', 'lost'],
    ['dup', 'duplicated'],
    ['stranded', 'stranded'],
    ['no event', 'events_not_delivered'],
    ['no report', 'reports_lost'],
  ];
  const width = Math.max(...headlines.map(([name]) => name.length), 5);
  const row = (name: string, figures: Headline) =>
    `  ${name.padEnd(width)} ${columns.map(([title, key]) => String(figures[key]).padStart(title.length)).join(' ')}`;
  process.stdout.write(
    [
      '',
      `  Figures of this run (5xx excludes the 503 a database outage calls for): ${join(ARTIFACTS, 'figures.json')}, tables in figures.md`,
      `  ${''.padEnd(width)} ${columns.map(([title]) => title).join(' ')}`,
      ...headlines.map(([name, figures]) => row(name, figures)),
      row('total', report.totals),
      failedTests.length
        ? `  ${failedTests.length} test(s) failed; a figure they did not reach reads "not measured" in figures.md and counts 0 above`
        : '  Every chaos test passed.',
      '',
    ].join('\n'),
  );
}
