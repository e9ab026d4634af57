import { commitProbeRow, withCommitProbe } from '../commit-probe.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { count, ms, perSecond, refusals } from '../format.ts';
import { machineCpuRow, withMachineCpu } from '../machine-cpu.ts';
import type { Latency } from '../load/job.ts';
import { sentLatency, samplePending } from '../message-log.ts';
import { median } from '../percentiles.ts';

/** Enough sockets that the generator never waits for one at these rates. */
const CONNECTIONS = 64;

export interface Backlog {
  samples: number[];
  firstThird: number;
  lastThird: number;
  growing: boolean;
}

/**
 * Growing: the pending count of the run's last third stands above its first third's by more
 * than a tenth of a second of arrivals (a backlog that holds steady, however large, is not
 * growing; target 2's latency figures judge its size).
 */
export function judgeBacklog(samples: number[], ratePerSecond: number): Backlog {
  const third = Math.max(1, Math.floor(samples.length / 3));
  const mean = (values: number[]) => (values.length === 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length);
  const firstThird = Math.round(mean(samples.slice(0, third)));
  const lastThird = Math.round(mean(samples.slice(-third)));
  return { samples, firstThird, lastThird, growing: lastThird > firstThird + Math.max(10, ratePerSecond / 10) };
}

export const describeBacklog = (backlog: Backlog): string =>
  `pending ${count(backlog.firstThird)} in the first third, ${count(backlog.lastThird)} in the last (max ${count(Math.max(0, ...backlog.samples))})`;

/** POST /messages/send at a steady rate on a new tenant for the run's open-loop duration, with the pending backlog and the machine's CPU time during it. */
export async function openLoopSends(bench: Bench, reference: string, ratePerSecond: number) {
  const tenant = await bench.tenant(reference);
  const sampler = samplePending(bench.pool, tenant.accountId);
  const { value: result, cpu } = await withMachineCpu(() =>
    bench.send(tenant, reference, { connections: CONNECTIONS, durationSeconds: bench.options.durations.openLoopSeconds, ratePerSecond, windowSeconds: 1 }),
  );
  const backlog = judgeBacklog(await sampler.stop(), ratePerSecond);
  return { tenant, result, cpu, backlog };
}

/**
 * The accept p99 of each second of the loop, to tell a tail spread over the run from one that a
 * few seconds make: the first (a new tenant's keys not yet cached), or those a stall held up.
 */
export function describeSeconds(windows: Latency[], limitMs: number): string {
  const seconds = windows.filter((window) => window.count > 0);
  if (seconds.length === 0) return 'no seconds';
  const p99s = seconds.map((window) => window.p99);
  const over = p99s.filter((p99) => p99 > limitMs).length;
  return `median ${ms(median(p99s))}, worst ${ms(Math.max(...p99s))}, the first ${ms(p99s[0])}; ${over} of ${seconds.length} seconds over ${limitMs} ms`;
}

/** Target 2: sends arriving at a steady rate (half of target 1's maximum); accept latency, time to sent, backlog. */
export async function measureOpenLoop(bench: Bench, ratePerSecond: number): Promise<Measurement> {
  log(`2: POST /messages/send, open loop at ${ratePerSecond}/s, ${bench.options.durations.openLoopSeconds} s`);
  const {
    value: { tenant, result, cpu, backlog },
    commits,
  } = await withCommitProbe(bench.pool, () => openLoopSends(bench, 'bench-2-open-loop', ratePerSecond));
  const drain = await bench.settle();
  const sent = await sentLatency(bench.pool, tenant.accountId);
  const load = `at ${perSecond(ratePerSecond, 'msg')}`;
  return {
    rows: [
      {
        target: '2',
        what: `accept latency p99, open loop ${load}`,
        measured: `${ms(result.latency.p99)} (p50 ${ms(result.latency.p50)}, ${perSecond(result.okPerSecond, 'accepted')}${refusals(result)})`,
        baseline: '',
        ratio: '',
        goal: '<= 50 ms',
        pass: result.latency.p99 <= 50,
      },
      { target: '2', what: `created_at to sent_at p50, ${load}`, measured: ms(sent.p50), baseline: '', ratio: '', goal: '<= 50 ms', pass: sent.p50 <= 50 },
      {
        target: '2',
        what: `created_at to sent_at p99, ${load}`,
        measured: `${ms(sent.p99)}${sent.neverSent > 0 ? ` (${sent.neverSent} never sent)` : ''}`,
        baseline: '',
        ratio: '',
        goal: '<= 250 ms',
        pass: sent.p99 <= 250 && sent.neverSent === 0,
      },
      {
        target: '2',
        what: `backlog during the run, ${load}`,
        measured: describeBacklog(backlog),
        baseline: '',
        ratio: '',
        goal: 'not growing',
        pass: !backlog.growing,
      },
      {
        target: '2',
        what: `accept latency p99 of each second, ${load} (diagnosis)`,
        measured: describeSeconds(result.windows ?? [], 50),
        baseline: '',
        ratio: '',
        goal: '',
        pass: undefined,
      },
      machineCpuRow('2', `the open loop ${load}`, cpu, result.ok),
      commitProbeRow('2', `the open loop ${load}`, commits),
    ],
    figures: { ratePerSecond, result, cpu, sent, backlog, commits, backlogDrainedMs: drain.ms },
  };
}
