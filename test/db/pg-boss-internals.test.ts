import { expect } from 'chai';
import type { PgBoss } from 'pg-boss';
import { fetchInTurn, liveJobValues, queueDepths, untilNextStart, type TurnOptions } from '../../db/pg-boss-internals.ts';
import { connect } from '../../db/connection.ts';
import { startQueues } from '../../db/queues.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

const TURNS: TurnOptions = { groupConcurrency: { default: 4, tiers: { probation: 1 } }, ownerField: 'account_id' };

interface Spec {
  name: string;
  group: string;
  owner: string;
  tier?: string;
  priority?: number;
  /** Seconds ago it fell due: the larger, the earlier. */
  dueAgo?: number;
}

describe('fetching jobs in turn (fetchInTurn)', function () {
  this.timeout(60_000);
  let database: { url: string; drop: () => Promise<void> };
  let boss: PgBoss;
  let queue: string;
  let queues = 0;

  before(async () => {
    database = await siblingDatabase();
    boss = await startQueues(database.url, () => {});
  });

  after(async () => {
    await boss?.stop({ graceful: false });
    await database?.drop();
  });

  beforeEach(async () => {
    queue = `turns-${++queues}`;
    await boss.createQueue(queue);
  });

  const add = async (specs: Spec[]): Promise<void> => {
    for (const { name, group, owner, tier, priority = 0, dueAgo = 1 } of specs) {
      await boss.send(
        queue,
        { name, account_id: owner },
        { group: tier ? { id: group, tier } : { id: group }, priority, startAfter: new Date(Date.now() - dueAgo * 1000) },
      );
    }
  };
  const names = (jobs: { data: { name: string } }[]) => jobs.map((job) => job.data.name);
  // Jobs claimed together start together: their order within one fetch is not part of the contract.
  const fetch = async (batchSize: number, options: TurnOptions = TURNS) => names(await fetchInTurn<{ name: string }>(boss, queue, batchSize, options)).sort();

  it("takes an idle group's due job before an earlier-due job of a group that already has one in flight", async () => {
    await add([
      { name: 'busy-1', group: 'busy', owner: 'acc_a', dueAgo: 50 },
      { name: 'busy-2', group: 'busy', owner: 'acc_a', dueAgo: 40 },
      { name: 'idle-1', group: 'idle', owner: 'acc_b', dueAgo: 10 },
    ]);
    expect(await fetch(1)).to.deep.equal(['busy-1']);
    expect(await fetch(1)).to.deep.equal(['idle-1']);
    expect(await fetch(1)).to.deep.equal(['busy-2']);
  });

  it("finds a younger group's job behind another group's long backlog, one job of each per fetch under a cap of one", async () => {
    await add([
      ...Array.from({ length: 10 }, (_, i) => ({ name: `backlog-${i}`, group: 'backlog', owner: 'acc_a', tier: 'probation', dueAgo: 100 - i })),
      { name: 'young-1', group: 'young', owner: 'acc_b', tier: 'probation', dueAgo: 1 },
    ]);
    expect(await fetch(2)).to.deep.equal(['backlog-0', 'young-1']);
    // Both groups are at their cap of one in flight.
    expect(await fetch(5)).to.deep.equal([]);
  });

  it('gives the next turn to the account with fewer jobs in flight, then to the earlier due', async () => {
    await add([
      { name: 'a1', group: 'a-endpoint-1', owner: 'acc_a', tier: 'probation', dueAgo: 60 },
      { name: 'a2', group: 'a-endpoint-2', owner: 'acc_a', tier: 'probation', dueAgo: 59 },
      { name: 'a3', group: 'a-endpoint-3', owner: 'acc_a', tier: 'probation', dueAgo: 58 },
      { name: 'a4', group: 'a-endpoint-4', owner: 'acc_a', tier: 'probation', dueAgo: 57 },
    ]);
    expect(await fetch(2)).to.deep.equal(['a1', 'a2']);
    await add([
      { name: 'b1', group: 'b-endpoint-1', owner: 'acc_b', tier: 'probation', dueAgo: 1 },
      { name: 'c1', group: 'c-endpoint-1', owner: 'acc_c', tier: 'probation', dueAgo: 2 },
    ]);
    // acc_a holds two in flight, acc_b and acc_c none: theirs go first, the earlier due of them first.
    expect(await fetch(1)).to.deep.equal(['c1']);
    expect(await fetch(1)).to.deep.equal(['b1']);
    expect(await fetch(1)).to.deep.equal(['a3']);
  });

  it('takes higher priorities first, leaves lower ones below minPriority, and never a job not yet due', async () => {
    await add([
      { name: 'low', group: 'g1', owner: 'acc_a', priority: 0, dueAgo: 30 },
      { name: 'high', group: 'g2', owner: 'acc_a', priority: 1, dueAgo: 1 },
      { name: 'later', group: 'g3', owner: 'acc_a', priority: 1, dueAgo: -3600 },
    ]);
    expect(await fetch(5, { ...TURNS, minPriority: 1 })).to.deep.equal(['high']);
    expect(await fetch(5)).to.deep.equal(['low']);
  });

  it('claims each job once when fetches run at once', async () => {
    await add(Array.from({ length: 40 }, (_, i) => ({ name: `job-${i}`, group: `g${i}`, owner: `acc_${i % 4}` })));
    const claimed: string[] = [];
    // Fetches that pick the same jobs at once leave them to whichever claims first: a round may
    // claim fewer than asked, never one job twice.
    for (let round = 0; round < 40 && claimed.length < 40; round++) claimed.push(...(await Promise.all(Array.from({ length: 8 }, () => fetch(10)))).flat());
    expect(claimed).to.have.length(40);
    expect(new Set(claimed).size).to.equal(40);
  });

  it('tells how long until the next job waiting to start falls due, and nothing while none waits', async () => {
    expect(await untilNextStart(boss, queue)).to.equal(undefined);
    await add([{ name: 'due', group: 'g1', owner: 'acc_a' }]);
    expect(await untilNextStart(boss, queue)).to.equal(undefined);
    await add([
      { name: 'in-an-hour', group: 'g2', owner: 'acc_a', dueAgo: -3600 },
      { name: 'in-a-minute', group: 'g3', owner: 'acc_a', dueAgo: -60 },
    ]);
    expect(await untilNextStart(boss, queue)).to.be.within(30_000, 60_000);
  });

  it("answers jobs with the fields of pg-boss's own fetch, which the dispatcher completes and fails", async () => {
    await add([
      { name: 'ours', group: 'g1', owner: 'acc_a' },
      { name: 'theirs', group: 'g2', owner: 'acc_a', dueAgo: 0.5 },
    ]);
    const [ours] = await fetchInTurn<{ name: string }>(boss, queue, 1, TURNS);
    const [theirs] = await boss.fetch<{ name: string }>(queue, { batchSize: 1, includeMetadata: true });
    expect(ours.data.name).to.equal('ours');
    expect(Object.keys(ours).sort()).to.deep.equal(Object.keys(theirs).sort());
    expect(ours).to.include({ state: 'active', retryCount: 0, groupId: 'g1' });
    await boss.complete(queue, [ours, theirs]);
    expect((await boss.getJobById(queue, ours.id))?.state).to.equal('completed');
  });

  it("relies on pg-boss's job table, its job_now() and its pool as they are: an upgrade that changes them fails here", async () => {
    const db = connect(database.url, 1);
    try {
      const { rows } = await db.raw(`SELECT column_name FROM information_schema.columns WHERE table_schema = 'pgboss' AND table_name = 'job'`);
      const columns = rows.map((row: { column_name: string }) => row.column_name);
      for (const column of [
        'name',
        'state',
        'data',
        'priority',
        'start_after',
        'started_on',
        'created_on',
        'heartbeat_on',
        'retry_count',
        'group_id',
        'group_tier',
        'blocked',
      ]) {
        expect(columns, column).to.include(column);
      }
      expect((await db.raw("SELECT pgboss.job_now() <= now() + interval '1 second' AS ok")).rows[0].ok).to.equal(true);
      const bossDb = boss.getDb() as { pool?: unknown; executeSql?: unknown };
      expect(bossDb.pool, "getDb()'s pool").to.be.an('object');
      expect(bossDb.executeSql, "getDb()'s executeSql").to.be.a('function');

      await add([{ name: 'live', group: 'g1', owner: 'acc_a' }]);
      const live = await db.raw(liveJobValues(queue, ['name']));
      expect(live.rows.map((row: { value: string }) => row.value)).to.deep.equal(['live']);
      expect((await queueDepths(db, [queue])).map(({ name, state, count }) => [name, state, count])).to.deep.equal([[queue, 'created', 1]]);
    } finally {
      await db.destroy();
    }
  });
});
