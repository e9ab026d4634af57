import type { PgbenchResult } from '../baselines.ts';
import type { Bench } from '../context.ts';
import { cpuBetween, cpuPer, sampleCpu } from '../probes.ts';
import type { LoadResult } from '../load.ts';
import { ms, perSecond, ratio, refusals, row, type Measurement } from '../report.ts';

export const CLOSED_LOOP_CONNECTIONS = 32;
/**
 * A closed loop after a warm-up, each followed by `settle`, which drains what it left: the machine's
 * CPU over the loop, and over the loop and the drain, until the last message was delivered.
 */
export async function closedLoop(bench: Bench, load: (seconds: number, warmUp: boolean) => Promise<LoadResult>, settle: () => Promise<unknown>) {
  const { warmupSeconds, sendSeconds } = bench.options.durations;
  await load(warmupSeconds, true);
  await settle();
  const before = await sampleCpu();
  const result = await load(sendSeconds, false);
  const cpu = cpuBetween(before, await sampleCpu());
  await settle();
  return { result, cpu, life: cpuBetween(before, await sampleCpu()) };
}

/** A closed loop's accepted rate against pgbench's per-transaction ceiling: the cells of its row, and the share. */
export function againstPgbench(result: LoadResult, pgbench: PgbenchResult | undefined) {
  const share = pgbench ? result.okPerSecond / pgbench.transactionsPerSecond : Number.NaN;
  const measured = `${perSecond(result.okPerSecond, 'accepted')} (p50 ${ms(result.latency.p50)}, p99 ${ms(result.latency.p99)}${refusals(result)})`;
  return { share, measured, baseline: pgbench ? `pgbench ${perSecond(pgbench.transactionsPerSecond, 'tx')}` : 'pgbench not run', ratio: ratio(share) };
}

/** POST /messages/send in a closed loop from a new account of 50 keys, against pgbench, with the machine's CPU a message. */
export async function measureSend(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement & { acceptedPerSecond: number }> {
  const tenant = await bench.tenant('send');
  const load = (durationSeconds: number, warmUp: boolean) =>
    bench.send(tenant, warmUp ? 'bench-send-warm-up' : 'bench-send', { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds });
  const { result, cpu, life } = await closedLoop(bench, load, () => bench.settle());
  const { share, ...cells } = againstPgbench(result, pgbench);
  const what = `POST /messages/send, closed loop, ${CLOSED_LOOP_CONNECTIONS} connections, 1 account, 50 keys`;
  const lifeMs = ((life.busySeconds * 1000) / result.ok).toFixed(2);
  const rows = [
    row('send', what, cells.measured, { ...cells, goal: '>= 0.50', pass: pgbench ? share >= 0.5 : undefined }),
    row('send', 'machine CPU per accepted message, closed loop (diagnosis)', `${cpuPer(cpu, result.ok)}; ${lifeMs} ms until the last was delivered`),
  ];
  return { acceptedPerSecond: result.okPerSecond, rows, figures: { result, cpu, life } };
}
