import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc (USER_HZ), 100 on every Linux the bench runs on. */
export const TICKS_PER_SECOND = 100;

/** The processes whose CPU the bench tells apart; the load generator, pgbench and the bench itself are the rest. */
export type CpuRole = 'postgres' | 'dispatch' | 'upstream';
export type CpuByRole = Record<CpuRole, number>;

/** CPU ticks so far (user and system, its own and its reaped children's) of each running process that has a role, by pid. */
export type ProcessTicks = Map<number, { role: CpuRole; ticks: number }>;

/**
 * A process's role from its name and command line: PostgreSQL's processes (every backend, the
 * WAL writer, the checkpointer, whichever server it is) keep the name `postgres`; Dispatch and the
 * fake upstream are Node running their script. The floor server plays Dispatch's part in the
 * floor's diagnosis, and is counted as Dispatch there.
 */
export function roleOf(name: string, commandLine: string): CpuRole | undefined {
  if (name === 'postgres') return 'postgres';
  if (commandLine.includes('app/main.ts') || commandLine.includes('scripts/bench/floor-server.ts')) return 'dispatch';
  if (commandLine.includes('scripts/bench/fake-upstream.ts')) return 'upstream';
  return undefined;
}

/** A process's name, command line, and CPU ticks so far: its own and those of the children it has reaped. */
export async function readCpuTicks(pid: number): Promise<{ name: string; commandLine: string; ticks: number }> {
  const [stat, commandLine] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/cmdline`, 'utf8')]);
  // The name is in parentheses and may itself hold spaces or parentheses: the fields follow the last ')'.
  const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  // From the state (field 3) on: utime, stime, cutime and cstime are fields 14 to 17. The last two
  // hold the children it has reaped: the postmaster's hold the backends that have exited.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { name, commandLine: commandLine.replaceAll('\0', ' '), ticks: fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) };
}

async function roleTicks(pid: number): Promise<{ role: CpuRole; ticks: number } | undefined> {
  const { name, commandLine, ticks } = await readCpuTicks(pid);
  const role = roleOf(name, commandLine);
  return role === undefined ? undefined : { role, ticks };
}

/** The CPU ticks of every process with a role, read from /proc (Linux); a process that exits while read is left out. */
export async function sampleProcessTicks(): Promise<ProcessTicks> {
  const pids = (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry)).map(Number);
  const sampled = await Promise.all(pids.map((pid) => roleTicks(pid).catch(() => undefined)));
  const ticks: ProcessTicks = new Map();
  sampled.forEach((sample, index) => {
    if (sample) ticks.set(pids[index], sample);
  });
  return ticks;
}

/**
 * CPU seconds each role spent between two samples: each role's ticks after less its ticks before.
 * A backend that exits in between leaves the sum of its own and moves, whole, into its parent's
 * reaped children, so that the difference still counts just what it spent in between; one that
 * starts and exits in between counts there alone.
 */
export function cpuByRoleBetween(before: ProcessTicks, after: ProcessTicks): CpuByRole {
  const seconds: CpuByRole = { postgres: 0, dispatch: 0, upstream: 0 };
  for (const { role, ticks } of after.values()) seconds[role] += ticks / TICKS_PER_SECOND;
  for (const { role, ticks } of before.values()) seconds[role] -= ticks / TICKS_PER_SECOND;
  return seconds;
}
