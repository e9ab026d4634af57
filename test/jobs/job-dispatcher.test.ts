import { expect } from 'chai';
import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { connect } from '../../db/connection.ts';
import { jobQueueOf, QUEUES, startQueues } from '../../db/queues.ts';
import { startJobDispatchers, type JobDispatchers } from '../../jobs/job-dispatcher.ts';
import { eventually } from '../support/fixtures.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

// Far longer than the test may take: a job that runs did not wait for a poll.
const POLL_MS = 600_000;
const QUEUE = QUEUES.dailyPurge.name;

describe('a job created to start later', function () {
  this.timeout(60_000);
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  let boss: PgBoss;
  let dispatchers: JobDispatchers;
  let ran: { label: string; at: number }[];

  before(async () => {
    database = await siblingDatabase();
    db = connect(database.url, 2);
    boss = await startQueues(database.url, () => {});
  });

  after(async () => {
    await boss?.stop({ graceful: false });
    await db?.destroy();
    await database?.drop();
  });

  beforeEach(async () => {
    ran = [];
    dispatchers = await startJobDispatchers(boss, database.url, (error) => {
      throw error;
    });
  });

  afterEach(() => dispatchers.stop(1000));

  const work = () =>
    dispatchers.run<{ label: string }>(QUEUE, { concurrency: 2, pollMs: POLL_MS }, (job) => {
      ran.push({ label: job.data.label, at: Date.now() });
      return Promise.resolve();
    });
  const ranLabels = () =>
    eventually(
      () => ran.map((run) => run.label),
      (labels) => labels.length > 0,
      { timeoutMs: 20_000, what: 'a job to run' },
    );

  it('runs at its start time when it waited before the dispatcher started, not at the next poll', async () => {
    const startAfter = new Date(Date.now() + 1500);
    await boss.send(QUEUE, { label: 'waiting' }, { startAfter });
    work();
    expect(await ranLabels()).to.deep.equal(['waiting']);
    expect(ran[0].at).to.be.at.least(startAfter.getTime());
  });

  it('runs at its start time when its enqueuing transaction announced it to a napping dispatcher', async () => {
    const enqueue = (label: string, startAfter?: Date) =>
      db.transaction((trx) => jobQueueOf(boss).enqueue(trx, 'dailyPurge', { label }, startAfter && { startAfter }));
    work();
    // Once a job due at once has run and been completed, the dispatcher has looked for jobs
    // waiting to start and found none: it naps for POLL_MS unless told.
    await enqueue('first');
    await eventually(
      async () =>
        (await db.raw(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ? AND data ->> 'label' = 'first' AND state = 'completed'`, [QUEUE])).rows[0]
          .n as number,
      (n) => n > 0,
    );
    const startAfter = new Date(Date.now() + 1500);
    await enqueue('announced', startAfter);
    expect(
      await eventually(
        () => ran.map((run) => run.label),
        (labels) => labels.length > 1,
        { timeoutMs: 20_000, what: 'the later job to run' },
      ),
    ).to.deep.equal(['first', 'announced']);
    expect(ran[1].at).to.be.at.least(startAfter.getTime());
  });
});
