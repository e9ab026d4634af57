import type pg from 'pg';
import { log, type Bench, type Measurement } from '../context.ts';
import { ms, perSecond } from '../format.ts';
import { machineCpuRow, withMachineCpu } from '../machine-cpu.ts';
import { openLoopSends } from './open-loop.ts';

/** A trickle: one message at a time, nothing for a batch to share. */
const TRICKLE_PER_SECOND = 20;
const IDLE_SECONDS = 3;
const ROUND_TRIPS = 1000;
const SPACED_MS = 5;

/**
 * The machine's CPU time per round trip of one trivial statement, above what it spends with no
 * load (`idleCores`), made back to back and then one every SPACED_MS: what waking a process costs
 * the machine when it has gone idle in between.
 */
async function roundTripCpu(pool: pg.Pool, idleCores: number): Promise<{ backToBackUs: number; spacedUs: number }> {
  const client = await pool.connect();
  try {
    const perRoundTrip = async (count: number, gapMs: number) => {
      const { cpu } = await withMachineCpu(async () => {
        for (let i = 0; i < count; i++) {
          await client.query({ name: 'bench-round-trip', text: 'SELECT $1::int AS n', values: [i] });
          if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
        }
      });
      return ((cpu.busySeconds - idleCores * cpu.wallSeconds) * 1e6) / count;
    };
    return { backToBackUs: await perRoundTrip(ROUND_TRIPS, 0), spacedUs: await perRoundTrip(ROUND_TRIPS / 2, SPACED_MS) };
  } finally {
    client.release();
  }
}

/**
 * What a message costs the machine when it comes alone (a diagnosis, not a target): the open loop
 * at a trickle, where every group commit, job and report batch holds one message. Beside target
 * 2's row it shows how much of a message's cost is per round trip rather than per message. The
 * machine's CPU with no load at all (timers, pollers, the load generator's clock) comes first, so
 * that the two can be told apart.
 */
export async function measureTrickle(bench: Bench): Promise<Measurement> {
  const { cpu: idle } = await withMachineCpu(() => new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000)));
  const roundTrip = await roundTripCpu(bench.pool, idle.busyCores);
  log(`cpu: POST /messages/send, open loop at ${TRICKLE_PER_SECOND}/s, ${bench.options.durations.openLoopSeconds} s`);
  const { result, cpu } = await openLoopSends(bench, 'bench-cpu-trickle', TRICKLE_PER_SECOND);
  await bench.settle();
  const row = machineCpuRow('cpu', `an open loop at ${perSecond(TRICKLE_PER_SECOND, 'msg')}`, cpu, result.ok);
  const measured = `${row.measured}, ${idle.busyCores.toFixed(2)} busy with no load; accept p50 ${ms(result.latency.p50)}, p99 ${ms(result.latency.p99)}`;
  const roundTrips = {
    target: 'cpu',
    what: `machine CPU per round trip of SELECT $1 from the bench to PostgreSQL, back to back and one every ${SPACED_MS} ms, above no load (diagnosis)`,
    measured: `${Math.round(roundTrip.backToBackUs)} us back to back, ${Math.round(roundTrip.spacedUs)} us spaced`,
    baseline: '',
    ratio: '',
    goal: '',
    pass: undefined,
  };
  return { rows: [{ ...row, measured }, roundTrips], figures: { result, cpu, idle, roundTrip } };
}
