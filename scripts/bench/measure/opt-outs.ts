import { log, type Bench, type Measurement } from '../context.ts';
import { count, ms, ratio, refusals } from '../format.ts';
import { settleSeed } from '../message-log.ts';
import type { Tenant } from '../tenant.ts';

/** One send at a time, as target 6: the figure is a send's own cost, not the queue that slow sends build. */
const CONNECTIONS = 1;
/** Half of what one key may send in a minute (6,000), so that the rate limit never answers. */
const MAX_SENDS = 3000;
/** Runs differ by this much without any cause on a shared machine. */
const NOISE = 1.25;

/**
 * `count` opt-outs of `accountId` in one set-based INSERT: +1 415 numbers, none of which the
 * load sends to (its recipients are +1 212 7xx xxxx), so every send looks its recipient up among
 * them, finds none and is accepted. Then settled, as after every seed (settleSeed).
 */
async function seedOptOuts(bench: Bench, accountId: string, total: number): Promise<void> {
  await bench.pool.query(
    `INSERT INTO opt_outs (account_id, number, source, reason, created_at)
     SELECT $1, '+1415' || lpad(g::text, 7, '0'), 'api', 'bench-seed', now() - make_interval(secs => $2::int - g)
       FROM generate_series(1, $2::int) AS g`,
    [accountId, total],
  );
  await settleSeed(bench.pool, ['opt_outs']);
}

/** Issue 10: a send from an account holding `seededOptOuts` opt-outs costs the same as one from an account holding none. */
export async function measureOptOuts(bench: Bench): Promise<Measurement> {
  const seconds = bench.options.durations.optOutSeconds;
  const seeded = bench.options.durations.seededOptOuts;
  const [none, many] = await Promise.all([bench.tenant('opt-outs-none', 1), bench.tenant('opt-outs-many', 1)]);
  log(`opt-outs: seeding ${count(seeded)} opt-outs into one account (one INSERT ... SELECT generate_series), then VACUUM ANALYZE and CHECKPOINT`);
  const started = Date.now();
  await seedOptOuts(bench, many.accountId, seeded);
  log(`  seeded in ${Math.round((Date.now() - started) / 1000)} s`);
  const run = (tenant: Tenant, reference: string) => bench.send(tenant, reference, { connections: CONNECTIONS, durationSeconds: seconds, maxRequests: MAX_SENDS });
  log(`opt-outs: POST /messages/send from two accounts at the same time, one send at a time each, ${seconds} s: one with ${count(seeded)} opt-outs, one with none`);
  // Side by side, so that whatever else loads the machine meanwhile weighs on both alike.
  const [without, withOptOuts] = await Promise.all([run(none, 'bench-opt-outs-none'), run(many, 'bench-opt-outs-many')]);
  await bench.settle();
  const p50 = withOptOuts.latency.p50 / without.latency.p50;
  const p99 = withOptOuts.latency.p99 / without.latency.p99;
  return {
    rows: [
      {
        target: 'opt-outs',
        what: `send latency p50, ${count(seeded)} vs 0 opt-outs in the account`,
        measured: `${ms(withOptOuts.latency.p50)} (p99 ${ms(withOptOuts.latency.p99)}${refusals(withOptOuts)})`,
        baseline: `${ms(without.latency.p50)} (p99 ${ms(without.latency.p99)}${refusals(without)})`,
        ratio: `${ratio(p50)} (p99 ${ratio(p99)})`,
        goal: `p50 ratio <= ${NOISE}`,
        pass: p50 <= NOISE && [without, withOptOuts].every((result) => Object.keys(result.statuses).every((status) => status.startsWith('2'))),
      },
    ],
    figures: { seeded, without, with: withOptOuts },
  };
}
