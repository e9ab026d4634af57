import type { PgbenchResult } from '../baselines.ts';
import { log, type Bench, type Measurement, type Row } from '../context.ts';
import type { LoadResult } from '../load/job.ts';
import { lifeCpuRow, machineCpuRow, withMachineCpu, type MachineCpu } from '../machine-cpu.ts';
import type { Tenant } from '../tenant.ts';
import { ms, perSecond, ratio, refusals } from '../format.ts';

export const CLOSED_LOOP_CONNECTIONS = 32;

/**
 * Target 1's load on a new tenant of 50 keys: a warm-up, settled, then POST /messages/send in a
 * closed loop of CLOSED_LOOP_CONNECTIONS for the run's send duration, with the machine's CPU time
 * during the loop. `before` runs just before the loop and `after` just after it, whether it
 * succeeded or not.
 */
export async function closedLoopSends(
  bench: Bench,
  label: string,
  reference: string,
  around: { before?: () => void; after?: () => void } = {},
): Promise<{ tenant: Tenant; result: LoadResult; cpu: MachineCpu }> {
  const { durations } = bench.options;
  const tenant = await bench.tenant(reference);
  log(`${label}: warm-up, ${durations.warmupSeconds} s`);
  await bench.send(tenant, `${reference}-warmup`, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: durations.warmupSeconds });
  await bench.settle();
  log(`${label}: POST /messages/send, closed loop, ${CLOSED_LOOP_CONNECTIONS} connections, ${durations.sendSeconds} s`);
  around.before?.();
  try {
    const { value: result, cpu } = await withMachineCpu(() =>
      bench.send(tenant, reference, { connections: CLOSED_LOOP_CONNECTIONS, durationSeconds: durations.sendSeconds }),
    );
    return { tenant, result, cpu };
  } finally {
    around.after?.();
  }
}

/** A closed loop's accepted rate against pgbench's per-transaction ceiling: the cells of its row, and the share. */
export function againstPgbench(result: LoadResult, pgbench: PgbenchResult | undefined): { cells: Pick<Row, 'measured' | 'baseline' | 'ratio'>; share: number } {
  const share = pgbench ? result.okPerSecond / pgbench.transactionsPerSecond : Number.NaN;
  return {
    cells: {
      measured: `${perSecond(result.okPerSecond, 'accepted')} (p50 ${ms(result.latency.p50)}, p99 ${ms(result.latency.p99)}${refusals(result)})`,
      baseline: pgbench ? `pgbench ${perSecond(pgbench.transactionsPerSecond, 'tx')}` : 'pgbench not run',
      ratio: ratio(share),
    },
    share,
  };
}

/**
 * What bounds target 1 on the database's side: PostgreSQL's CPU for one accepted message (its
 * acceptance, submission and report, at the closed loop's pace) against its CPU for one pgbench
 * transaction, and the rate PostgreSQL alone would allow if it had every core to itself.
 */
function databaseCpuRow(result: LoadResult, cpu: MachineCpu, pgbench: PgbenchResult): Row {
  const perMessage = cpu.byRole.postgres / result.ok;
  const perTransaction = pgbench.cpu.byRole.postgres / pgbench.transactions;
  const ceiling = cpu.cores / perMessage;
  return {
    target: '1',
    what: "PostgreSQL's CPU per accepted message during the closed loop, against per pgbench transaction (diagnosis)",
    measured: `${(perMessage * 1000).toFixed(2)} ms against ${(perTransaction * 1000).toFixed(2)} ms: with all ${cpu.cores} cores, PostgreSQL alone would carry ${perSecond(ceiling, 'msg')}, ${ratio(ceiling / pgbench.transactionsPerSecond)} of pgbench`,
    baseline: '',
    ratio: ratio(perMessage / perTransaction, 'x'),
    goal: '',
    pass: undefined,
  };
}

/** Target 1: POST /messages/send in a closed loop, 32 connections, one account, 50 keys, against pgbench's per-transaction ceiling. */
export async function measureSendThroughput(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement & { acceptedPerSecond: number }> {
  const { result, cpu } = await closedLoopSends(bench, '1', 'bench-1-closed-loop');
  const { value: drain, cpu: drainCpu } = await withMachineCpu(() => bench.settle());
  const { cells, share } = againstPgbench(result, pgbench);
  return {
    acceptedPerSecond: result.okPerSecond,
    rows: [
      {
        target: '1',
        what: `POST /messages/send, closed loop, ${CLOSED_LOOP_CONNECTIONS} connections, 1 account, 50 keys`,
        ...cells,
        goal: '>= 0.50',
        pass: pgbench ? share >= 0.5 : undefined,
      },
      machineCpuRow('1', 'the closed loop', cpu, result.ok),
      lifeCpuRow('1', 'Dispatch', result.ok, cpu, drainCpu, drain.ms),
      ...(pgbench ? [databaseCpuRow(result, cpu, pgbench)] : []),
    ],
    figures: { result, cpu, backlogDrainedMs: drain.ms, drainCpu },
  };
}
