import { percentile, round } from '../percentiles.ts';
import type { Latency, LoadResult } from './job.ts';

/**
 * Collects every answer's latency at full precision (autocannon's histogram keeps whole
 * milliseconds and, under a rate, adds synthetic samples), and per window when asked.
 */
export class Recorder {
  readonly statuses: Record<string, number> = {};
  errors = 0;
  /** Why requests got no answer, where the load generator knows: the error's code, or its message. */
  readonly errorReasons: Record<string, number> = {};
  unanswered = 0;
  #latencies: number[] = [];
  #windows: number[][] = [];
  readonly #windowMs: number | undefined;

  constructor(windowSeconds?: number) {
    this.#windowMs = windowSeconds === undefined ? undefined : windowSeconds * 1000;
  }

  get answered(): number {
    return Object.values(this.statuses).reduce((sum, count) => sum + count, 0);
  }

  /** One answer: its status, its latency, and when (ms since the run started) it was due. */
  answer(status: number, latencyMs: number, atMs: number): void {
    this.statuses[status] = (this.statuses[status] ?? 0) + 1;
    if (status < 200 || status > 299) return;
    this.#latencies.push(latencyMs);
    if (this.#windowMs !== undefined) (this.#windows[Math.floor(atMs / this.#windowMs)] ??= []).push(latencyMs);
  }

  /** A request that got no answer. */
  fail(error: Error & { code?: string }): void {
    this.errors++;
    const reason = error.code ?? error.message;
    this.errorReasons[reason] = (this.errorReasons[reason] ?? 0) + 1;
  }

  result(durationSeconds: number): LoadResult {
    const ok = this.#latencies.length;
    const answered = this.answered;
    return {
      requests: answered + this.errors + this.unanswered,
      ok,
      okPerSecond: round(ok / durationSeconds),
      statuses: this.statuses,
      errors: this.errors,
      ...(this.errors > 0 && { errorReasons: this.errorReasons }),
      unanswered: this.unanswered,
      durationSeconds: round(durationSeconds, 2),
      latency: summary(this.#latencies),
      ...(this.#windowMs !== undefined && { windows: Array.from(this.#windows, (window) => summary(window ?? [])) }),
    };
  }
}

function summary(values: number[]): Latency {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) => round(percentile(sorted, p), 2);
  return { p50: at(50), p90: at(90), p99: at(99), max: round(sorted.at(-1) ?? Number.NaN, 2), count: sorted.length };
}
