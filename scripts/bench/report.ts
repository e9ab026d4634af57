/** How a run reports: its rows and their figures' formats, the printed table, results.json and the log. */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname } from 'node:path';

/** One line of the table. `pass` is undefined for a diagnosis, which has no goal. */
export type Row = { target: string; what: string; measured: string; baseline: string; ratio: string; goal: string; pass: boolean | undefined };
/** The rows, and the raw figures for results.json. */
export type Measurement = { rows: Row[]; figures: Record<string, unknown> };
const NO_GOAL = { baseline: '', ratio: '', goal: '', pass: undefined };
export const row = (target: string, what: string, measured: string, rest: Partial<Row> = {}): Row => ({ target, what, measured, ...NO_GOAL, ...rest });
export const ms = (value: number): string => (Number.isFinite(value) ? `${value < 10 ? value.toFixed(1) : Math.round(value)} ms` : 'n/a');
export const perSecond = (value: number, unit: string): string => `${Math.round(value).toLocaleString('en-US')} ${unit}/s`;
export const ratio = (value: number, suffix = ''): string => (Number.isFinite(value) ? `${value.toFixed(2)}${suffix}` : 'n/a');
export const count = (value: number): string => value.toLocaleString('en-US');
export const p99s = (results: { latency: { p99: number } }[]): string =>
  `p99 ${results.map(({ latency }) => ms(latency.p99).replace(' ms', '')).join(', ')} ms`;

/** Answers other than 2xx and requests that got none, when there were any. */
export function refusals({ statuses, errorReasons = {} }: { statuses: Record<string, number>; errorReasons?: Record<string, number> }): string {
  const other = Object.entries(statuses).filter(([status]) => !status.startsWith('2'));
  const failed = Object.entries(errorReasons).map(([reason, n]) => [`unanswered (${reason})`, n]);
  return [...other, ...failed].map(([what, n]) => `; ${n} x ${what}`).join('');
}

/** Markdown, so that it can be pasted as it is. */
export function formatTable(rows: Row[]): string {
  const header = ['#', 'what', 'measured', 'baseline (same run)', 'ratio', 'goal', 'result'];
  const cells = rows.map((r) => [r.target, r.what, r.measured, r.baseline, r.ratio, r.goal, r.pass === undefined ? '-' : r.pass ? 'pass' : 'FAIL']);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) => `| ${values.map((value, i) => value.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** The machine, and its load average before and after the run: others' work on a shared machine shows in every figure. */
export function describeMachine(postgres: string, loadAverageAtStart: number[]): Record<string, unknown> {
  const [cpus, load] = [os.cpus(), (averages: number[]) => averages.map((average) => Number(average.toFixed(2)))];
  const loadAverages = { load_average_at_start: load(loadAverageAtStart), load_average_at_end: load(os.loadavg()) };
  return { cpus: cpus.length, cpu_model: cpus[0]?.model, memory_gb: Math.round(os.totalmem() / 2 ** 30), ...loadAverages, node: process.version, postgres };
}

export async function writeResults(file: string, results: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}

const started = Date.now();
export const log = (line: string): void => void process.stderr.write(`[bench ${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s] ${line}\n`);
