import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as hdr from 'hdr-histogram-js';
import type { LoadResult } from './load-generator.ts';

/** One load, as the bench asks the load generator for it. */
export interface LoadJob {
  /** The same operation on each Dispatch process; the connections are spread over them. */
  urls: string[];
  method: 'GET' | 'POST';
  /** API keys taken in turn, one a request (a key may make 6,000 requests a minute); none: no Authorization. */
  keys: string[];
  /** POST /messages/send bodies, a different recipient each. */
  send?: { from: string; reference: string };
  connections: number;
  durationSeconds: number;
  /** A closed loop stops once this many were sent. */
  maxRequests?: number;
  /** An open loop: requests start at this steady rate, whatever the pace of the answers. Unset: a closed loop. */
  ratePerSecond?: number;
  /** Also the percentiles of each window of this length, to compare a run's start with its end. */
  windowSeconds?: number;
  /** Where the ids of the accepted messages go, one a line, for the totals. */
  idsFile?: string;
}

/** A valid US number for the i-th request (+1 212 7xx xxxx), a million apart before they repeat. */
export const recipient = (i: number): string => `+12127${String(i % 1_000_000).padStart(6, '0')}`;

export type { LoadResult };
export type Latency = ReturnType<typeof latency>;
/** The percentiles of latencies in milliseconds, kept in microseconds. */
export function latency(valuesMs: number[]) {
  const histogram = hdr.build();
  for (const value of valuesMs) histogram.recordValue(Math.round(value * 1000));
  const ms = (us: number) => (histogram.totalCount === 0 ? Number.NaN : Math.round(us / 10) / 100);
  const at = (percentile: number) => ms(histogram.getValueAtPercentile(percentile));
  return { p50: at(50), p90: at(90), p99: at(99), max: ms(histogram.maxValue), count: histogram.totalCount };
}

/** One load in a process of its own, so that the generator never shares a thread with the bench. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const generator = fileURLToPath(new URL('./load-generator.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [generator, JSON.stringify(job)], { maxBuffer: 2 ** 24 });
  // JSON has no NaN: the latency of no answers comes back null, and must not pass a goal as 0 would.
  return JSON.parse(stdout, (_key, value: unknown) => (value === null ? Number.NaN : value)) as LoadResult;
}

/** Reads one after the other, each after a warm-up of it: its figure is then of a process that has served it before, as in service. */
export async function warmReads(jobs: LoadJob[], warmupSeconds: number): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  for (const job of jobs) results.push(await runLoad({ ...job, durationSeconds: warmupSeconds }).then(() => runLoad(job)));
  return results;
}
