/** A send must cost the same whatever data its key or account holds: through a key's limits, beside an account's opt-outs. */
import type { Bench, Tenant } from '../context.ts';
import type { LoadResult } from '../load.ts';
import { settleSeed } from '../message-log.ts';
import { count, log, ms, ratio, refusals, row, type Measurement } from '../report.ts';
import type { BigAccount } from './reads.ts';

/** Half of what one key may send in a minute, so that the rate limit never answers. */
const MAX_SENDS = 3000;
/** Runs differ by this much without any cause on a shared machine. */
const NOISE = 1.25;
type Side = { sender: Pick<Tenant, 'keys' | 'from'>; reference: string; name: string };
/**
 * Sends through both sides at once, one at a time each (a send's own cost, not the queue slow sends
 * build), so that whatever else loads the machine weighs on both alike; their p50s compared.
 */
async function pairedSends(bench: Bench, target: string, what: string, seconds: number, sides: [Side, Side]): Promise<Measurement> {
  const run = ({ sender, reference }: Side) => bench.send(sender, reference, { connections: 1, durationSeconds: seconds, maxRequests: MAX_SENDS });
  const [baseline, measured] = await Promise.all(sides.map(run));
  await bench.settle();
  const p50 = measured.latency.p50 / baseline.latency.p50;
  const latencies = (result: LoadResult) => `${ms(result.latency.p50)} (p99 ${ms(result.latency.p99)}${refusals(result)})`;
  const accepted = [baseline, measured].every((result) => Object.keys(result.statuses).every((status) => status.startsWith('2')));
  const cells = { baseline: latencies(baseline), ratio: `${ratio(p50)} (p99 ${ratio(measured.latency.p99 / baseline.latency.p99)})` };
  return {
    rows: [row(target, what, latencies(measured), { ...cells, goal: `p50 ratio <= ${NOISE}`, pass: p50 <= NOISE && accepted })],
    figures: { [sides[0].name]: baseline, [sides[1].name]: measured },
  };
}

/** Through a key with daily and monthly limits that has sent nothing this month, and through one that sent the big account's messages. */
export function measureLimits(bench: Bench, big: BigAccount): Promise<Measurement> {
  const side = (key: string, name: string) => ({ sender: { keys: [key], from: big.tenant.from }, reference: `bench-limits-${name}-key`, name });
  const what = `send p50 through a key with limits, ${count(big.seeded)} vs 0 messages this month`;
  return pairedSends(bench, 'limits', what, bench.options.durations.limitSeconds, [side(big.freshKey, 'fresh'), side(big.busyKey, 'busy')]);
}

/**
 * From an account holding `seededOptOuts` opt-outs and from one holding none. None of the opt-outs
 * (+1 415 numbers) is a recipient of the load, so that every send looks its recipient up among them.
 */
export async function measureOptOuts(bench: Bench): Promise<Measurement> {
  const seeded = bench.options.durations.seededOptOuts;
  const [none, many] = await Promise.all([bench.tenant('opt-outs-none', 1), bench.tenant('opt-outs-many', 1)]);
  log(`opt-outs: seeding ${count(seeded)} opt-outs into one account (one INSERT ... SELECT), then VACUUM ANALYZE and CHECKPOINT`);
  await bench.pool.query(
    `INSERT INTO opt_outs (account_id, number, source, reason, created_at)
     SELECT $1, '+1415' || lpad(g::text, 7, '0'), 'api', 'bench-seed', now() - make_interval(secs => $2::int - g) FROM generate_series(1, $2::int) AS g`,
    [many.accountId, seeded],
  );
  await settleSeed(bench.pool, ['opt_outs']);
  const side = (sender: Tenant, name: string) => ({ sender, reference: `bench-opt-outs-${name}`, name });
  const what = `send p50, ${count(seeded)} vs 0 opt-outs in the account`;
  return pairedSends(bench, 'opt-outs', what, bench.options.durations.optOutSeconds, [side(none, 'without'), side(many, 'with')]);
}
