import { commitProbeRow, withCommitProbe } from '../commit-probe.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { ms, perSecond, ratio, refusals } from '../format.ts';
import { samplePending } from '../message-log.ts';
import { describeBacklog, judgeBacklog } from './open-loop.ts';

const CONNECTIONS = 64;

/** Target 7: a long open-loop run at target 2's rate; the last window's p99 against the first's, and each Dispatch process's resident memory. */
export async function measureSoak(bench: Bench, ratePerSecond: number): Promise<Measurement> {
  const { soakSeconds: seconds, soakWindowSeconds: window } = bench.options.durations;
  if (seconds === 0) {
    const skipped = { baseline: '', ratio: '', pass: undefined, measured: `skipped (${bench.options.quick ? '--quick' : '--soak-seconds 0'})` };
    return {
      rows: [
        { target: '7', what: 'p99 of the last minute vs the first, 10-minute open loop', goal: '<= 1.2x', ...skipped },
        { target: '7', what: 'resident memory growth over the 10-minute run', goal: '< 10%', ...skipped },
      ],
      figures: { skipped: true },
    };
  }
  const tenant = await bench.tenant('soak');
  log(`7: POST /messages/send, open loop at ${ratePerSecond}/s for ${seconds} s, p99 per ${window} s`);
  const resident = () => Promise.all(bench.processes.map((instance) => instance.residentKb()));
  // Resident memory at the end of every window: a process's heap grows to the load's working
  // size during the first minute, as the p99 settles; growth is counted from there, as drift is.
  const rssIdle = await resident();
  const rssByWindow: number[][] = [];
  const rssSampler = setInterval(() => void resident().then((kb) => rssByWindow.push(kb)), window * 1000);
  const sampler = samplePending(bench.pool, tenant.accountId);
  const { value: result, commits } = await withCommitProbe(bench.pool, () =>
    bench.send(tenant, 'bench-7-soak', { connections: CONNECTIONS, durationSeconds: seconds, ratePerSecond, windowSeconds: window }),
  );
  clearInterval(rssSampler);
  const rssAfter = await resident();
  const rssBefore = rssByWindow[0] ?? rssIdle;
  const backlog = judgeBacklog(await sampler.stop(), ratePerSecond);
  await bench.settle();
  const windows = (result.windows ?? []).filter((summary) => summary.count > 0);
  const [first, last] = [windows[0], windows.at(-1)];
  const drift = last && first ? last.p99 / first.p99 : Number.NaN;
  const growth = Math.max(...rssAfter.map((after, i) => after / rssBefore[i] - 1));
  const mb = (kb: number) => `${Math.round(kb / 1024)} MB`;
  const length = seconds % 60 === 0 ? `${seconds / 60}-minute` : `${seconds} s`;
  return {
    rows: [
      {
        target: '7',
        what: `p99 of the last ${window} s vs the first, ${length} open loop at ${perSecond(ratePerSecond, 'msg')}`,
        measured: `${ms(last?.p99 ?? Number.NaN)} (${perSecond(result.okPerSecond, 'accepted')}${refusals(result)}; ${describeBacklog(backlog)})`,
        baseline: `${ms(first?.p99 ?? Number.NaN)}`,
        ratio: ratio(drift, 'x'),
        goal: '<= 1.2x',
        pass: drift <= 1.2,
      },
      {
        target: '7',
        what: `resident memory growth from the end of the first ${window} s to the end of the ${length} run (worst process)`,
        measured: `${rssAfter.map(mb).join(', ')} (${rssIdle.map(mb).join(', ')} before the load)`,
        baseline: rssBefore.map(mb).join(', '),
        ratio: `${(growth * 100).toFixed(1)}%`,
        goal: '< 10%',
        pass: growth < 0.1,
      },
      commitProbeRow('7', `the ${length} open loop`, commits),
    ],
    figures: { ratePerSecond, result, backlog, commits, rssIdleKb: rssIdle, rssByWindowKb: rssByWindow, rssBeforeKb: rssBefore, rssAfterKb: rssAfter },
  };
}
