import type { Bench, Row } from '../context.ts';
import { ms, ratio, refusals } from '../format.ts';
import type { LoadResult } from '../load/job.ts';
import type { Tenant } from '../tenant.ts';

/** One send at a time: the figure is a send's own cost, not the queue that slow sends build. */
const CONNECTIONS = 1;
/** Half of what one key may send in a minute (6,000), so that the rate limit never answers. */
const MAX_SENDS = 3000;
/** Runs differ by this much without any cause on a shared machine. */
const NOISE = 1.25;

interface Side {
  sender: Pick<Tenant, 'keys' | 'from'>;
  /** The send reference, for the totals check. */
  reference: string;
}

export interface PairedSends {
  baseline: LoadResult;
  measured: LoadResult;
  row: Row;
}

/**
 * Sends through `baseline` and `measured` side by side for `seconds`, so that whatever else loads
 * the machine meanwhile weighs on both alike, and compares their p50: a send must cost the same
 * with the data `measured` holds as without it (targets 6 and opt-outs).
 */
export async function pairedSends(
  bench: Bench,
  seconds: number,
  sides: { baseline: Side; measured: Side },
  row: Pick<Row, 'target' | 'what'>,
): Promise<PairedSends> {
  const run = ({ sender, reference }: Side) => bench.send(sender, reference, { connections: CONNECTIONS, durationSeconds: seconds, maxRequests: MAX_SENDS });
  const [baseline, measured] = await Promise.all([run(sides.baseline), run(sides.measured)]);
  await bench.settle();
  const p50 = measured.latency.p50 / baseline.latency.p50;
  const p99 = measured.latency.p99 / baseline.latency.p99;
  const latencies = (result: LoadResult) => `${ms(result.latency.p50)} (p99 ${ms(result.latency.p99)}${refusals(result)})`;
  return {
    baseline,
    measured,
    row: {
      ...row,
      measured: latencies(measured),
      baseline: latencies(baseline),
      ratio: `${ratio(p50)} (p99 ${ratio(p99)})`,
      goal: `p50 ratio <= ${NOISE}`,
      pass: p50 <= NOISE && [baseline, measured].every((result) => Object.keys(result.statuses).every((status) => status.startsWith('2'))),
    },
  };
}
