import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Prometheus's own checker (Debian's `prometheus` package; .ci/run installs it), or undefined when absent. */
export const PROMTOOL = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'promtool'))
  .find((path) => existsSync(path));

/** Skips the calling test, saying why, when promtool is not installed. */
export function requirePromtool(context: Mocha.Context): string {
  if (PROMTOOL === undefined) {
    console.log('      skipped: promtool is not installed (apt-get install prometheus)');
    context.skip();
  }
  return PROMTOOL;
}

/** Runs promtool with `input` on its stdin. */
export function runPromtool(promtool: string, args: string[], input = ''): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
    child.stdin.end(input);
  });
}

/** The metric names of an exposition (`# TYPE` lines), as name → type. */
export const exposedTypes = (text: string): Map<string, string> => new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]));

const HISTOGRAM_SUFFIXES = ['_bucket', '_count', '_sum'];

/** The exposed metric a series name of a query belongs to (a histogram's `_bucket`, `_count`, `_sum` belong to it), if any. */
export function exposedMetric(series: string, types: Map<string, string>): string | undefined {
  if (types.has(series)) return series;
  const suffix = HISTOGRAM_SUFFIXES.find((s) => series.endsWith(s));
  const base = suffix && series.slice(0, -suffix.length);
  return base && types.get(base) === 'histogram' ? base : undefined;
}
