import type pg from 'pg';
import type { Row } from './context.ts';
import { count, ms } from './format.ts';

const PROBE_INTERVAL_MS = 50;
/** A commit slower than this is a stall of the database, not a wait for a core: a send's whole accept p50 is about 30 ms. */
const STALL_MS = 100;

export interface CommitProbe {
  commits: number;
  worstMs: number;
  /** When each commit over STALL_MS began, in seconds from the probe's start. */
  stallsAtSeconds: number[];
}

/**
 * One durable commit (a one-row INSERT, synchronous commit on) every PROBE_INTERVAL_MS on a
 * connection of its own while a load runs: the database's commit latency beside the load's, so
 * that a stall of the storage (every commit waiting on its WAL flush) shows as such in the report,
 * and a load's tail without one is time spent in Dispatch or waiting for a core.
 */
export async function probeCommits(pool: pg.Pool): Promise<{ stop: () => Promise<CommitProbe> }> {
  const client = await pool.connect();
  await client.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (at timestamptz NOT NULL DEFAULT clock_timestamp())');
  const probe: CommitProbe = { commits: 0, worstMs: 0, stallsAtSeconds: [] };
  const started = performance.now();
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const begun = performance.now();
      await client.query('INSERT INTO bench_commit_probe DEFAULT VALUES');
      const took = performance.now() - begun;
      probe.commits++;
      probe.worstMs = Math.max(probe.worstMs, took);
      if (took > STALL_MS) probe.stallsAtSeconds.push(Math.round((begun - started) / 100) / 10);
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      try {
        await loop;
      } finally {
        client.release();
      }
      return probe;
    },
  };
}

/** A diagnosis row: how the probe's commits fared during a load. */
export const commitProbeRow = (target: string, load: string, probe: CommitProbe): Row => ({
  target,
  what: `a durable commit every ${PROBE_INTERVAL_MS} ms on a connection of its own during ${load} (diagnosis)`,
  measured:
    `${count(probe.commits)} commits, the slowest ${ms(probe.worstMs)}; ${count(probe.stallsAtSeconds.length)} over ${STALL_MS} ms` +
    (probe.stallsAtSeconds.length > 0 ? `, at ${probe.stallsAtSeconds.slice(0, 12).join(', ')}${probe.stallsAtSeconds.length > 12 ? ', ...' : ''} s` : ''),
  baseline: '',
  ratio: '',
  goal: '',
  pass: undefined,
});
