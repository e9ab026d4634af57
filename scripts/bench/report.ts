import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname } from 'node:path';
import type { Row } from './context.ts';

const verdict = (pass: boolean | undefined): string => (pass === undefined ? '-' : pass ? 'pass' : 'FAIL');

/** The table of targets as Markdown, so that it can be pasted as it is. */
export function formatTable(rows: Row[]): string {
  const header = ['#', 'what', 'measured', 'baseline (same run)', 'ratio', 'goal', 'result'];
  const cells = rows.map((row) => [row.target, row.what, row.measured, row.baseline, row.ratio, row.goal, verdict(row.pass)]);
  const widths = header.map((title, i) => Math.max(title.length, ...cells.map((line) => line[i].length)));
  const line = (values: string[]) => `| ${values.map((value, i) => value.padEnd(widths[i])).join(' | ')} |`;
  return [line(header), `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** The machine, and its load average (1, 5, 15 minutes) before and after the run: others' work on a shared machine shows in every figure. */
export function describeMachine(postgresVersion: string, loadAverageAtStart: number[]): Record<string, unknown> {
  const load = (averages: number[]) => averages.map((average) => Number(average.toFixed(2)));
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpu_model: cpus[0]?.model,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    load_average_at_start: load(loadAverageAtStart),
    load_average_at_end: load(os.loadavg()),
    node: process.version,
    postgres: postgresVersion,
  };
}

export async function writeResults(file: string, results: Record<string, unknown>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}
