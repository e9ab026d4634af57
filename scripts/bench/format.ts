/** Figures as the table prints them. */
export const ms = (value: number): string => (Number.isFinite(value) ? `${value < 10 ? value.toFixed(1) : Math.round(value)} ms` : 'n/a');
export const perSecond = (value: number, unit: string): string => `${Math.round(value).toLocaleString('en-US')} ${unit}/s`;
export const ratio = (value: number, suffix = ''): string => (Number.isFinite(value) ? `${value.toFixed(2)}${suffix}` : 'n/a');
export const count = (value: number): string => value.toLocaleString('en-US');
/** The machine's CPU time per message handled, and how many of its cores were busy for it. */
export const cpuPerMessage = (cpu: { busySeconds: number; busyCores: number; cores: number }, messages: number): string =>
  `${ms((cpu.busySeconds * 1000) / messages)} of CPU a message (${cpu.busyCores.toFixed(2)} of ${cpu.cores} cores busy)`;
/** Answers other than 2xx and requests that got none, when there were any. */
export function refusals(result: { statuses: Record<string, number>; errors: number }): string {
  const other = Object.entries(result.statuses).filter(([status]) => !status.startsWith('2')).map(([status, n]) => `${n} x ${status}`);
  if (result.errors > 0) other.push(`${result.errors} unanswered`);
  return other.length > 0 ? `; ${other.join(', ')}` : '';
}
