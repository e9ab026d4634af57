import { log, type Bench, type Measurement } from '../context.ts';
import { count } from '../format.ts';
import { settleSeed } from '../message-log.ts';
import { pairedSends } from './paired-sends.ts';

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
  log(
    `opt-outs: POST /messages/send from two accounts at the same time, one send at a time each, ${seconds} s: one with ${count(seeded)} opt-outs, one with none`,
  );
  const {
    baseline: without,
    measured: withOptOuts,
    row,
  } = await pairedSends(
    bench,
    seconds,
    { baseline: { sender: none, reference: 'bench-opt-outs-none' }, measured: { sender: many, reference: 'bench-opt-outs-many' } },
    { target: 'opt-outs', what: `send latency p50, ${count(seeded)} vs 0 opt-outs in the account` },
  );
  return {
    rows: [row],
    figures: { seeded, without, with: withOptOuts },
  };
}
