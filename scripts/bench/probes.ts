/**
 * The machine's busy CPU beside a load, from /proc (Linux): machine-wide, so that nothing escapes it
 * (a load generator that exited, a backend that came and went), split by process kind.
 */
import { readdir, readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

export const TICKS_PER_SECOND = 100; // USER_HZ on every Linux the bench runs on
export type CpuRole = 'postgres' | 'dispatch' | 'upstream';
export type CpuSample = { at: number; busyTicks: number; byPid: Map<number, { role: CpuRole; ticks: number }> };
export type Cpu = ReturnType<typeof cpuBetween>;

/** PostgreSQL's processes keep the name `postgres`; the others are Node running their script, the floor server in Dispatch's place. */
export function roleOf(name: string, commandLine: string): CpuRole | undefined {
  if (name === 'postgres') return 'postgres';
  if (/app\/main\.ts|bench\/floor-server\.ts/.test(commandLine)) return 'dispatch';
  return commandLine.includes('bench/fake-upstream.ts') ? 'upstream' : undefined;
}

/** A process's name, command line, and CPU ticks so far: its own and its reaped children's (a postmaster's hold its exited backends). */
export async function readCpuTicks(pid: number): Promise<{ name: string; commandLine: string; ticks: number }> {
  const [stat, commandLine] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/cmdline`, 'utf8')]);
  // The name may itself hold spaces or parentheses; utime, stime, cutime and cstime are fields 14 to 17.
  const [name, fields] = [stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), stat.slice(stat.lastIndexOf(')') + 2).split(' ')];
  return { name, commandLine: commandLine.replaceAll('\0', ' '), ticks: fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) };
}

export async function sampleCpu(): Promise<CpuSample> {
  const byPid: CpuSample['byPid'] = new Map();
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry)).map(Number)) {
    const read = await readCpuTicks(pid).catch(() => undefined); // exited meanwhile
    const role = read && roleOf(read.name, read.commandLine);
    if (role) byPid.set(pid, { role, ticks: read.ticks });
  }
  // Every state of the first line but idle and I/O wait.
  const states = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
  return { at: performance.now(), busyTicks: states.reduce((sum, value) => sum + value, 0) - states[3] - states[4], byPid };
}

/**
 * What was spent between two samples. A backend that exits in between moves its ticks, whole, into
 * its postmaster's reaped children, so that each role's difference still counts just what it spent.
 */
export function cpuBetween(before: CpuSample, after: CpuSample) {
  const byRole: Record<CpuRole, number> = { postgres: 0, dispatch: 0, upstream: 0 };
  for (const { role, ticks } of after.byPid.values()) byRole[role] += ticks / TICKS_PER_SECOND;
  for (const { role, ticks } of before.byPid.values()) byRole[role] -= ticks / TICKS_PER_SECOND;
  const busySeconds = (after.busyTicks - before.busyTicks) / TICKS_PER_SECOND;
  const wallSeconds = (after.at - before.at) / 1000;
  return { busySeconds, wallSeconds, busyCores: busySeconds / wallSeconds, cores: availableParallelism(), byRole };
}

/** The CPU a message, and its split; the rest is the load generator's, the bench's and anything else's. */
export function cpuPer(cpu: Cpu, handled: number): string {
  const each = (seconds: number) => ((Math.max(0, seconds) * 1000) / handled).toFixed(2);
  const { postgres, dispatch, upstream } = cpu.byRole;
  const split = `PostgreSQL ${each(postgres)}, Dispatch ${each(dispatch)}, upstream ${each(upstream)}, the rest ${each(cpu.busySeconds - postgres - dispatch - upstream)}`;
  return `${each(cpu.busySeconds)} ms a message (${cpu.busyCores.toFixed(2)} of ${cpu.cores} cores busy): ${split} ms`;
}
