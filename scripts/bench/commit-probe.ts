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
  /** The checkpoints the server finished while the probe ran (it counts one as it ends), by what asked for it. */
  checkpoints: Checkpoints;
}

interface Checkpoints {
  /** Asked for by the WAL's volume reaching `max_wal_size` (or by a CHECKPOINT command). */
  requested: number;
  /** Due by `checkpoint_timeout`. */
  timed: number;
}

/** PostgreSQL 17 moved the checkpointer's counters out of pg_stat_bgwriter; the bench may run on either. */
export async function checkpointsSoFar(db: pg.Pool | pg.PoolClient): Promise<Checkpoints> {
  const { rows } = await db.query<{ version: number }>("SELECT current_setting('server_version_num')::int AS version");
  const {
    rows: [counts],
  } = await db.query<{ requested: string; timed: string }>(
    rows[0].version >= 170000
      ? 'SELECT num_requested AS requested, num_timed AS timed FROM pg_stat_checkpointer'
      : 'SELECT checkpoints_req AS requested, checkpoints_timed AS timed FROM pg_stat_bgwriter',
  );
  return { requested: Number(counts.requested), timed: Number(counts.timed) };
}

/**
 * `run`, with one durable commit (a one-row INSERT, synchronous commit on) every PROBE_INTERVAL_MS
 * on a connection of its own while it runs: the database's commit latency beside the load's, so
 * that a stall of the storage (every commit waiting on its WAL flush) shows as such in the report,
 * and a load's tail without one is time spent in Dispatch or waiting for a core.
 */
export async function withCommitProbe<T>(pool: pg.Pool, run: () => Promise<T>): Promise<{ value: T; commits: CommitProbe }> {
  const client = await pool.connect();
  const commits: CommitProbe = { commits: 0, worstMs: 0, stallsAtSeconds: [], checkpoints: { requested: 0, timed: 0 } };
  let stopping = false;
  const probing = (async () => {
    await client.query('CREATE TABLE IF NOT EXISTS bench_commit_probe (at timestamptz NOT NULL DEFAULT clock_timestamp())');
    const before = await checkpointsSoFar(client);
    const started = performance.now();
    while (!stopping) {
      const begun = performance.now();
      await client.query('INSERT INTO bench_commit_probe DEFAULT VALUES');
      const took = performance.now() - begun;
      commits.commits++;
      commits.worstMs = Math.max(commits.worstMs, took);
      if (took > STALL_MS) commits.stallsAtSeconds.push(Math.round((begun - started) / 100) / 10);
      await new Promise((resolve) => setTimeout(resolve, PROBE_INTERVAL_MS));
    }
    const after = await checkpointsSoFar(client);
    commits.checkpoints = { requested: after.requested - before.requested, timed: after.timed - before.timed };
  })();
  // A failed probe stops probing (its connection is then dropped, not pooled); the load's own
  // figures stand, and the row shows how far the probe got.
  const probed = probing.then(
    () => undefined,
    (error: Error) => error,
  );
  try {
    return { value: await run(), commits };
  } finally {
    stopping = true;
    client.release(await probed);
  }
}

/** A diagnosis row: how the probe's commits fared during a load. */
export const commitProbeRow = (target: string, load: string, probe: CommitProbe): Row => ({
  target,
  what: `a durable commit every ${PROBE_INTERVAL_MS} ms on a connection of its own during ${load} (diagnosis)`,
  measured:
    `${count(probe.commits)} commits, the slowest ${ms(probe.worstMs)}; ${count(probe.stallsAtSeconds.length)} over ${STALL_MS} ms` +
    (probe.stallsAtSeconds.length > 0 ? `, at ${probe.stallsAtSeconds.slice(0, 12).join(', ')}${probe.stallsAtSeconds.length > 12 ? ', ...' : ''} s` : '') +
    `; checkpoints finished meanwhile: ${count(probe.checkpoints.requested)} requested by WAL volume, ${count(probe.checkpoints.timed)} by time`,
  baseline: '',
  ratio: '',
  goal: '',
  pass: undefined,
});
