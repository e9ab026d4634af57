import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Row } from './context.ts';
import { cpuPerMessage } from './format.ts';

/** Clock ticks per second of /proc/stat (USER_HZ), 100 on every Linux the bench runs on. */
const TICKS_PER_SECOND = 100;

export interface MachineCpu {
  /** CPU seconds the whole machine spent busy: Dispatch, PostgreSQL, the upstream, the load generator, anything else. */
  busySeconds: number;
  wallSeconds: number;
  /** busySeconds / wallSeconds: how many of `cores` were busy on average. */
  busyCores: number;
  cores: number;
}

/** Busy ticks of all CPUs so far: every state of /proc/stat's first line but idle and I/O wait. */
async function busyTicks(): Promise<number> {
  const [first] = (await readFile('/proc/stat', 'utf8')).split('\n');
  const values = first.trim().split(/\s+/).slice(1, 9).map(Number);
  const [, , , idle, iowait] = values;
  return values.reduce((sum, value) => sum + value, 0) - idle - iowait;
}

/**
 * The machine's busy CPU time while `run` runs. Machine-wide rather than per process, so that
 * PostgreSQL's backends, whose processes come and go, count as much as Dispatch's own.
 */
export async function withMachineCpu<T>(run: () => Promise<T>): Promise<{ value: T; cpu: MachineCpu }> {
  const before = await busyTicks();
  const started = performance.now();
  const value = await run();
  const after = await busyTicks();
  const wallSeconds = (performance.now() - started) / 1000;
  const busySeconds = (after - before) / TICKS_PER_SECOND;
  return { value, cpu: { busySeconds, wallSeconds, busyCores: busySeconds / wallSeconds, cores: availableParallelism() } };
}

/**
 * A diagnosis row: the machine's CPU time per accepted message during a load. Accepting, sending
 * and taking the reports all run during the load, so it is what a message costs the machine at
 * that pace, whatever part of it runs where.
 */
export const machineCpuRow = (target: string, load: string, cpu: MachineCpu, accepted: number): Row => ({
  target,
  what: `machine CPU per accepted message during ${load} (diagnosis)`,
  measured: cpuPerMessage(cpu, accepted),
  baseline: '',
  ratio: '',
  goal: '',
  pass: undefined,
});
