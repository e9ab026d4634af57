import type { MachineCpu } from './machine-cpu.ts';

/** Figures as the table prints them. */
export const ms = (value: number): string => (Number.isFinite(value) ? `${value < 10 ? value.toFixed(1) : Math.round(value)} ms` : 'n/a');
export const perSecond = (value: number, unit: string): string => `${Math.round(value).toLocaleString('en-US')} ${unit}/s`;
export const ratio = (value: number, suffix = ''): string => (Number.isFinite(value) ? `${value.toFixed(2)}${suffix}` : 'n/a');
export const count = (value: number): string => value.toLocaleString('en-US');
/**
 * The machine's CPU time per message (or other `unit`) handled, how many of its cores were busy
 * for it, and its split between PostgreSQL, Dispatch, the fake upstream and the rest (the load
 * generator, the bench, the machine's own), in ms.
 */
export function cpuPerMessage(cpu: MachineCpu, messages: number, unit = 'message'): string {
  const each = (seconds: number) => ((Math.max(0, seconds) * 1000) / messages).toFixed(2);
  const { postgres, dispatch, upstream } = cpu.byRole;
  const rest = cpu.busySeconds - postgres - dispatch - upstream;
  return `${ms((cpu.busySeconds * 1000) / messages)} of CPU a ${unit} (${cpu.busyCores.toFixed(2)} of ${cpu.cores} cores busy): PostgreSQL ${each(postgres)}, Dispatch ${each(dispatch)}, upstream ${each(upstream)}, the rest ${each(rest)} ms`;
}
/** Answers other than 2xx and requests that got none, when there were any. */
export function refusals(result: { statuses: Record<string, number>; errors: number; errorReasons?: Record<string, number> }): string {
  const other = Object.entries(result.statuses)
    .filter(([status]) => !status.startsWith('2'))
    .map(([status, n]) => `${n} x ${status}`);
  const reasons = Object.entries(result.errorReasons ?? {}).map(([reason, n]) => `${n} ${reason}`);
  if (result.errors > 0) other.push(`${result.errors} unanswered${reasons.length > 0 ? ` (${reasons.join(', ')})` : ''}`);
  return other.length > 0 ? `; ${other.join(', ')}` : '';
}
