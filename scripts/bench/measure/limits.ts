import { log, type Bench, type Measurement } from '../context.ts';
import { count, ms, ratio, refusals } from '../format.ts';
import type { BigAccount } from './big-account.ts';

/** One send at a time: the figure is a send's own cost, not the queue that slow sends build. */
const CONNECTIONS = 1;
/** Half of what one key may send in a minute (6,000), so that the rate limit never answers. */
const MAX_SENDS = 3000;
/** Runs differ by this much without any cause on a shared machine. */
const NOISE = 1.25;

/** Target 6: a send through a key with daily and monthly limits costs the same whether the key has sent nothing this month or the seeded messages. */
export async function measureLimits(bench: Bench, big: BigAccount): Promise<Measurement> {
  const seconds = bench.options.durations.limitSeconds;
  const run = (key: string, reference: string) => bench.send({ keys: [key], from: big.tenant.from }, reference, { connections: CONNECTIONS, durationSeconds: seconds, maxRequests: MAX_SENDS });
  log(`6: POST /messages/send through two keys with limits at the same time, one send at a time each, ${seconds} s: one with 0 messages this month, one with ${count(big.seeded)}`);
  // Side by side, so that whatever else loads the machine meanwhile weighs on both alike.
  const [fresh, busy] = await Promise.all([run(big.freshKey, 'bench-6-key-without-history'), run(big.busyKey, 'bench-6-key-with-history')]);
  await bench.settle();
  const p50 = busy.latency.p50 / fresh.latency.p50;
  const p99 = busy.latency.p99 / fresh.latency.p99;
  return {
    rows: [
      {
        target: '6',
        what: `send latency p50 through a key with limits, ${count(big.seeded)} vs 0 messages this month`,
        measured: `${ms(busy.latency.p50)} (p99 ${ms(busy.latency.p99)}${refusals(busy)})`,
        baseline: `${ms(fresh.latency.p50)} (p99 ${ms(fresh.latency.p99)}${refusals(fresh)})`,
        ratio: `${ratio(p50)} (p99 ${ratio(p99)})`,
        goal: `p50 ratio <= ${NOISE}`,
        pass: p50 <= NOISE && [fresh, busy].every((result) => Object.keys(result.statuses).every((status) => status.startsWith('2'))),
      },
    ],
    figures: { fresh, busy },
  };
}
