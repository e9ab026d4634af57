/** The open loops: sends arriving at a steady rate (half of the send closed loop's), for a short run and for a long one. */
import type { Bench, Tenant } from '../context.ts';
import { cpuBetween, cpuPer, sampleCpu } from '../probes.ts';
import type { LoadJob } from '../load.ts';
import { samplePending, sentLatency } from '../message-log.ts';
import { count, ms, perSecond, ratio, refusals, row, type Measurement } from '../report.ts';

/**
 * On enough connections that the generator never waits for one, its backlog sampled each second.
 * Growing: the last third's pending count above the first's by a tenth of a second of arrivals; a
 * steady backlog, however large, is not growing (the latencies judge its size).
 */
async function openLoop(bench: Bench, tenant: Tenant, name: string, ratePerSecond: number, job: Pick<LoadJob, 'durationSeconds' | 'windowSeconds'>) {
  const stopSampling = samplePending(bench.pool, tenant.accountId);
  const result = await bench.send(tenant, `bench-${name}`, { connections: 64, ratePerSecond, ...job });
  const samples = await stopSampling();
  const third = Math.max(1, Math.floor(samples.length / 3));
  const mean = (values: number[]) => Math.round(values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length));
  const [first, last] = [mean(samples.slice(0, third)), mean(samples.slice(-third))];
  const text = `${count(first)} pending in the first third, ${count(last)} in the last`;
  return { result, backlog: { samples, growing: last > first + Math.max(10, ratePerSecond / 10), text } };
}

/** Accept latency, time to sent and backlog, with the machine's CPU beside them. */
export async function measureOpenLoop(bench: Bench, ratePerSecond: number): Promise<Measurement> {
  const [tenant, before] = [await bench.tenant('open-loop'), await sampleCpu()];
  const { result, backlog } = await openLoop(bench, tenant, 'open-loop', ratePerSecond, { durationSeconds: bench.options.durations.openLoopSeconds });
  const cpu = cpuBetween(before, await sampleCpu());
  await bench.settle();
  const sent = await sentLatency(bench.pool, tenant.accountId);
  const at = `at ${perSecond(ratePerSecond, 'msg')}`;
  const accepted = `${ms(result.latency.p99)} (p50 ${ms(result.latency.p50)}, ${perSecond(result.okPerSecond, 'accepted')}${refusals(result)})`;
  const toSent = `${ms(sent.p50)}, ${ms(sent.p99)}${sent.neverSent > 0 ? ` (${sent.neverSent} never sent)` : ''}`;
  const sentPass = sent.p50 <= 50 && sent.p99 <= 250 && sent.neverSent === 0;
  return {
    rows: [
      row('open-loop', `accept latency p99, open loop ${at}`, accepted, { goal: '<= 50 ms', pass: result.latency.p99 <= 50 }),
      row('open-loop', `created_at to sent_at, p50 and p99, ${at}`, toSent, { goal: '<= 50, <= 250 ms', pass: sentPass }),
      row('open-loop', `backlog during the run, ${at}`, backlog.text, { goal: 'not growing', pass: !backlog.growing }),
      row('open-loop', `machine CPU per accepted message, ${at} (diagnosis)`, cpuPer(cpu, result.ok)),
    ],
    figures: { ratePerSecond, result, cpu, sent, backlog },
  };
}

/** The open loop for a long run: its last window's p99 against its first's, and each Dispatch process's resident memory. */
export async function measureSoak(bench: Bench, ratePerSecond: number): Promise<Measurement> {
  const { soakSeconds: seconds, soakWindowSeconds: window } = bench.options.durations;
  const length = seconds === 0 ? 'soak' : seconds % 60 === 0 ? `${seconds / 60}-minute` : `${seconds} s`;
  const what = [`p99 of the last ${window} s vs the first, ${length} open loop`, `resident memory growth over the ${length} run (worst process)`];
  if (seconds === 0) {
    const skipped = `skipped (${bench.options.quick ? '--quick' : '--soak-seconds 0'})`;
    return { rows: [row('soak', what[0], skipped, { goal: '<= 1.2x' }), row('soak', what[1], skipped, { goal: '< 10%' })], figures: { skipped: true } };
  }
  const tenant = await bench.tenant('soak');
  const resident = () => Promise.all([...bench.dispatch.api, ...bench.dispatch.workers].map((instance) => instance.residentKb()));
  // A heap grows to the load's working size in the first window, as the p99 settles: growth counts from there, as drift does.
  const rssIdle = await resident();
  let rssFirst: Promise<number[]> | undefined;
  const timer = setTimeout(() => void (rssFirst = resident()), window * 1000);
  const { result, backlog } = await openLoop(bench, tenant, 'soak', ratePerSecond, { durationSeconds: seconds, windowSeconds: window });
  clearTimeout(timer);
  const [rssAfter, rssBefore] = [await resident(), (await rssFirst) ?? rssIdle];
  await bench.settle();
  const windows = (result.windows ?? []).filter((summary) => summary.count > 0);
  const [first, last] = [windows[0]?.p99 ?? Number.NaN, windows.at(-1)?.p99 ?? Number.NaN];
  const growth = Math.max(...rssAfter.map((after, i) => after / rssBefore[i] - 1));
  const mb = (kb: number[]) => kb.map((each) => `${Math.round(each / 1024)} MB`).join(', ');
  const drift = `${ms(last)} at ${perSecond(ratePerSecond, 'msg')} (${perSecond(result.okPerSecond, 'accepted')}${refusals(result)}; ${backlog.text})`;
  const memory = { baseline: mb(rssBefore), ratio: `${(growth * 100).toFixed(1)}%`, goal: '< 10%', pass: growth < 0.1 };
  return {
    rows: [
      row('soak', what[0], drift, { baseline: ms(first), ratio: ratio(last / first, 'x'), goal: '<= 1.2x', pass: last / first <= 1.2 }),
      row('soak', what[1], `${mb(rssAfter)} (${mb(rssIdle)} idle); from the end of the first ${window} s`, memory),
    ],
    figures: { ratePerSecond, result, backlog, rssIdleKb: rssIdle, rssBeforeKb: rssBefore, rssAfterKb: rssAfter },
  };
}
