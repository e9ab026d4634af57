import { log, type Bench, type Measurement } from '../context.ts';
import { count } from '../format.ts';
import type { BigAccount } from './big-account.ts';
import { pairedSends } from './paired-sends.ts';

/** Target 6: a send through a key with daily and monthly limits costs the same whether the key has sent nothing this month or the seeded messages. */
export async function measureLimits(bench: Bench, big: BigAccount): Promise<Measurement> {
  const seconds = bench.options.durations.limitSeconds;
  log(
    `6: POST /messages/send through two keys with limits at the same time, one send at a time each, ${seconds} s: one with 0 messages this month, one with ${count(big.seeded)}`,
  );
  const {
    baseline: fresh,
    measured: busy,
    row,
  } = await pairedSends(
    bench,
    seconds,
    {
      baseline: { sender: { keys: [big.freshKey], from: big.tenant.from }, reference: 'bench-6-key-without-history' },
      measured: { sender: { keys: [big.busyKey], from: big.tenant.from }, reference: 'bench-6-key-with-history' },
    },
    { target: '6', what: `send latency p50 through a key with limits, ${count(big.seeded)} vs 0 messages this month` },
  );
  return { rows: [row], figures: { fresh, busy } };
}
