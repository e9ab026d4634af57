import { expect } from 'chai';
import pg from 'pg';
import { checkpointsSoFar, withCommitProbe } from '../../scripts/bench/commit-probe.ts';
import { harness } from '../support/harness.ts';

/** A CHECKPOINT, once the server has counted it: it publishes its counters just after it wakes the caller. */
async function checkpoint(pool: pg.Pool): Promise<void> {
  const requestedSoFar = async () => (await checkpointsSoFar(pool)).requested;
  const before = await requestedSoFar();
  await pool.query('CHECKPOINT');
  while ((await requestedSoFar()) === before) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Waits for the probe's first commit: by then it has read the counters it starts from. */
async function probeCommitted(pool: pg.Pool): Promise<void> {
  const exists = async () => (await pool.query("SELECT to_regclass('bench_commit_probe') IS NOT NULL AS made")).rows[0].made as boolean;
  const committed = async () => Number((await pool.query('SELECT count(*) AS n FROM bench_commit_probe')).rows[0].n) > 0;
  while (!(await exists()) || !(await committed())) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("the bench's commit probe", () => {
  let pool: pg.Pool;

  before(() => {
    pool = new pg.Pool({ connectionString: harness.database.url, max: 3 });
  });

  after(() => pool.end());

  it('commits while the load runs, and counts a checkpoint the load asks for', async () => {
    // One before the probe, which it must not count.
    await checkpoint(pool);
    const { value, commits } = await withCommitProbe(pool, async () => {
      await probeCommitted(pool);
      await checkpoint(pool);
      return 'loaded';
    });
    expect(value).to.equal('loaded');
    expect(commits.commits).to.be.greaterThan(0);
    // Timed checkpoints are left out: one may fall due on a server the test shares.
    expect(commits.checkpoints.requested).to.equal(1);
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM bench_commit_probe');
    expect(Number(rows[0].n)).to.equal(commits.commits);
  });
});
