import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Row } from './context.ts';
import { cpuPerMessage } from './format.ts';
import { cpuByRoleBetween, sampleProcessTicks, TICKS_PER_SECOND, type CpuByRole, type CpuRole } from './process-cpu.ts';

export interface MachineCpu {
  /** CPU seconds the whole machine spent busy: Dispatch, PostgreSQL, the upstream, the load generator, anything else. */
  busySeconds: number;
  wallSeconds: number;
  /** busySeconds / wallSeconds: how many of `cores` were busy on average. */
  busyCores: number;
  cores: number;
  /** Of busySeconds, what PostgreSQL's processes, Dispatch's and the fake upstream's spent; the rest is the load generator's, the bench's and anything else's. */
  byRole: CpuByRole;
}

/** Busy ticks of all CPUs so far: every state of /proc/stat's first line but idle and I/O wait. */
async function busyTicks(): Promise<number> {
  const [first] = (await readFile('/proc/stat', 'utf8')).split('\n');
  const values = first.trim().split(/\s+/).slice(1, 9).map(Number);
  const [, , , idle, iowait] = values;
  return values.reduce((sum, value) => sum + value, 0) - idle - iowait;
}

/**
 * The machine's busy CPU time while `run` runs: machine-wide, so that nothing escapes it (a load
 * generator that has exited, a backend that came and went), and split by process where it can be.
 */
export async function withMachineCpu<T>(run: () => Promise<T>): Promise<{ value: T; cpu: MachineCpu }> {
  const processesBefore = await sampleProcessTicks();
  const before = await busyTicks();
  const started = performance.now();
  const value = await run();
  const after = await busyTicks();
  const wallSeconds = (performance.now() - started) / 1000;
  const byRole = cpuByRoleBetween(processesBefore, await sampleProcessTicks());
  const busySeconds = (after - before) / TICKS_PER_SECOND;
  return { value, cpu: { busySeconds, wallSeconds, busyCores: busySeconds / wallSeconds, cores: availableParallelism(), byRole } };
}

/**
 * A diagnosis row: the machine's CPU time per accepted message during a load. Accepting, sending
 * and taking the reports all run during the load, so it is what a message costs the machine at
 * that pace, whatever part of it runs where. A load of reads counts its answered requests instead.
 */
export const machineCpuRow = (target: string, load: string, cpu: MachineCpu, handled: number, unit: 'message' | 'request' = 'message'): Row => ({
  target,
  what: `machine CPU per ${unit === 'message' ? 'accepted message' : unit} during ${load} (diagnosis)`,
  measured: cpuPerMessage(cpu, handled, unit),
  baseline: '',
  ratio: '',
  goal: '',
  pass: undefined,
});

/** Two stretches of the machine's CPU as one: what they spent together, over both their walls. */
function joined(first: MachineCpu, second: MachineCpu): MachineCpu {
  const busySeconds = first.busySeconds + second.busySeconds;
  const wallSeconds = first.wallSeconds + second.wallSeconds;
  const byRole = Object.fromEntries(Object.entries(first.byRole).map(([role, seconds]) => [role, seconds + second.byRole[role as CpuRole]])) as CpuByRole;
  return { busySeconds, wallSeconds, busyCores: busySeconds / wallSeconds, cores: first.cores, byRole };
}

/**
 * A diagnosis row: the machine's CPU per message accepted in a closed loop, over the loop and the
 * drain after it, until the last of them was delivered. A closed loop sends part of what it
 * accepts after it ends; this counts each message's whole life, so that two servers that leave
 * different backlogs compare fairly.
 */
export const lifeCpuRow = (target: string, whose: string, accepted: number, loop: MachineCpu, drain: MachineCpu, drainMs: number): Row => ({
  target,
  what: `machine CPU per message over the loop and the ${(drainMs / 1000).toFixed(1)} s drain after it, until all were delivered: ${whose} (diagnosis)`,
  measured: cpuPerMessage(joined(loop, drain), accepted),
  baseline: '',
  ratio: '',
  goal: '',
  pass: undefined,
});
