import type { PgbenchResult } from '../baselines.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { ms, perSecond, ratio, refusals } from '../format.ts';

const CONNECTIONS = 32;

/** Target 1: POST /messages/send in a closed loop, 32 connections, one account, 50 keys, against pgbench's per-transaction ceiling. */
export async function measureSendThroughput(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement & { acceptedPerSecond: number }> {
  const { durations } = bench.options;
  const tenant = await bench.tenant('send-closed-loop');
  log(`1: warm-up, ${durations.warmupSeconds} s`);
  await bench.send(tenant, 'bench-warmup', { connections: CONNECTIONS, durationSeconds: durations.warmupSeconds });
  await bench.settle();
  log(`1: POST /messages/send, closed loop, ${CONNECTIONS} connections, ${durations.sendSeconds} s`);
  const result = await bench.send(tenant, 'bench-1-closed-loop', { connections: CONNECTIONS, durationSeconds: durations.sendSeconds });
  const drain = await bench.settle();
  const share = pgbench ? result.okPerSecond / pgbench.transactionsPerSecond : Number.NaN;
  return {
    acceptedPerSecond: result.okPerSecond,
    rows: [
      {
        target: '1',
        what: `POST /messages/send, closed loop, ${CONNECTIONS} connections, 1 account, 50 keys`,
        measured: `${perSecond(result.okPerSecond, 'accepted')} (p50 ${ms(result.latency.p50)}, p99 ${ms(result.latency.p99)}${refusals(result)})`,
        baseline: pgbench ? `pgbench ${perSecond(pgbench.transactionsPerSecond, 'tx')}` : 'pgbench not run',
        ratio: ratio(share),
        goal: '>= 0.50',
        pass: pgbench ? share >= 0.5 : undefined,
      },
    ],
    figures: { result, backlogDrainedMs: drain.ms },
  };
}
