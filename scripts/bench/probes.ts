/**
 * The machine's busy CPU beside a load, from /proc/stat (Linux): machine-wide, so that nothing
 * escapes it (a load generator that exited, a backend that came and went).
 */
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

export const TICKS_PER_SECOND = 100; // USER_HZ on every Linux the bench runs on
export type CpuSample = { at: number; busyTicks: number };
export type Cpu = ReturnType<typeof cpuBetween>;

export async function sampleCpu(): Promise<CpuSample> {
  // Every state of the first line but idle and I/O wait.
  const states = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  return { at: performance.now(), busyTicks: states.reduce((sum, value) => sum + value, 0) - states[3] - states[4] };
}

export function cpuBetween(before: CpuSample, after: CpuSample) {
  const busySeconds = (after.busyTicks - before.busyTicks) / TICKS_PER_SECOND;
  const wallSeconds = (after.at - before.at) / 1000;
  return { busySeconds, wallSeconds, busyCores: busySeconds / wallSeconds, cores: availableParallelism() };
}

/** The machine's CPU a message: PostgreSQL's, Dispatch's, the fake upstream's and the load generator's together. */
export const cpuPer = (cpu: Cpu, handled: number): string =>
  `${((Math.max(0, cpu.busySeconds) * 1000) / handled).toFixed(2)} ms a message (${cpu.busyCores.toFixed(2)} of ${cpu.cores} cores busy)`;
