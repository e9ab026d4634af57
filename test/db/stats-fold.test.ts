import { expect } from 'chai';
import type { Knex } from 'knex';
import { connect } from '../../db/connection.ts';
import { foldMessageStats } from '../../db/message-stats.ts';
import { moveMessageStatus } from '../../db/messages.ts';
import { QUEUES } from '../../db/queues.ts';
import { foldStatsStripes, messageStats, type StatsRequest } from '../../domain/stats.ts';
import { createTenant, eventually, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const HOUR_MS = 3_600_000;
const startOfHour = (ms: number) => new Date(Math.floor(ms / HOUR_MS) * HOUR_MS);

/** A minute into the hour three hours back: an hour that a fold takes, and before any hour a test that starts now might still count. */
const threeHoursAgo = () => new Date(startOfHour(Date.now()).getTime() - 3 * HOUR_MS + 60_000);

/** The tenant's counter rows of both tables: whether their hour is one a fold at `now` takes (one before now's), and their stripe. */
async function stripesOf(db: Knex, accountId: string, now: Date): Promise<{ table: string; past: boolean; stripe: number }[]> {
  const { rows } = await db.raw(
    `WITH counters AS (
       SELECT 'message_stats' AS table, hour, stripe FROM message_stats WHERE account_id = :accountId
       UNION ALL SELECT 'message_stat_details', hour, stripe FROM message_stat_details WHERE account_id = :accountId
     )
     SELECT "table", hour < (:cutoff::timestamptz AT TIME ZONE 'UTC') AS past, stripe FROM counters`,
    { accountId, cutoff: startOfHour(now.getTime()).toISOString() },
  );
  return rows;
}

const unfoldedPastRows = async (tenant: Tenant, now: Date) =>
  (await stripesOf(harness.db, tenant.accountId, now)).filter((row) => row.past && row.stripe !== 0);

/** Messages of `tenant` three hours ago, counted from two connections at once (two stripes), and one of this hour. */
async function countedFromTwoConnections(tenant: Tenant): Promise<void> {
  const first = await harness.db.transaction();
  const second = await harness.db.transaction();
  const created_at = threeHoursAgo();
  const ids: string[] = [];
  try {
    // Each written in a transaction of its own, so counted on its connection's stripe.
    ids.push(
      ...(await storeMessages(tenant, [{ status: 'pending', country: 'US', created_at }], first)),
      ...(await storeMessages(tenant, [{ status: 'pending', country: 'GB', created_at }], second)),
    );
    await first.commit();
    await second.commit();
  } finally {
    if (!first.isCompleted()) await first.rollback();
    if (!second.isCompleted()) await second.rollback();
  }
  // One delivered (a latency bucket), one failed (a failure code): the details have rows too.
  await moveMessageStatus(harness.db, ids[0], 'pending', 'delivered', { delivered_at: new Date(created_at.getTime() + 2000) });
  await moveMessageStatus(harness.db, ids[1], 'pending', 'failed', {
    cost: '0.0000',
    error: { type: 'provider_error', code: 'provider_rejected', message: 'No' },
  });
  await storeMessages(tenant, [{ status: 'pending' }]);
}

const lastFourHours = (tenant: Tenant): StatsRequest => ({
  accountId: tenant.accountId,
  from: new Date(Date.now() - 4 * HOUR_MS).toISOString(),
  to: new Date(Date.now() + HOUR_MS).toISOString(),
  interval: 'hour',
  groupBy: 'country',
});

/** The answer of GET /stats over the last four hours by hour and country, and a count over the messages. */
async function statsAndScan(tenant: Tenant) {
  const stats = await messageStats(harness.db, lastFourHours(tenant));
  const { rows } = await harness.db.raw(
    `SELECT status, count(*)::int AS n FROM messages WHERE account_id = ? AND created_at > now() - interval '4 hours' GROUP BY status ORDER BY status`,
    [tenant.accountId],
  );
  const scan = Object.fromEntries(rows.map((row: { status: string; n: number }) => [row.status, row.n]));
  return { stats, scan };
}

const byStatusOf = (stats: Awaited<ReturnType<typeof messageStats>>) => Object.fromEntries(Object.entries(stats.totals.byStatus).filter(([, n]) => n > 0));

describe('folding the statistics counters of past hours', () => {
  it('moves every stripe of the hours before this one into stripe 0, and the statistics answer the same', async () => {
    const now = new Date();
    const tenant = await createTenant();
    await countedFromTwoConnections(tenant);
    const before = await statsAndScan(tenant);
    expect(byStatusOf(before.stats)).to.deep.equal(before.scan);
    expect(new Set((await unfoldedPastRows(tenant, now)).filter((row) => row.table === 'message_stats').map((row) => row.stripe)).size).to.be.at.least(2);

    expect(await foldStatsStripes(harness.db, now)).to.be.at.least(2);

    expect((await statsAndScan(tenant)).stats).to.deep.equal(before.stats);
    const stripes = await stripesOf(harness.db, tenant.accountId, now);
    expect(stripes.filter((row) => row.past).map((row) => row.stripe)).to.satisfy(
      (folded: number[]) => folded.length >= 3 && folded.every((stripe) => stripe === 0),
    );
    // This hour's counters stay on their connections' stripes.
    expect(stripes.filter((row) => !row.past).map((row) => row.stripe)).to.satisfy(
      (current: number[]) => current.length > 0 && current.every((stripe) => stripe !== 0),
    );
  });

  it('adds what an hour counts after its fold to stripe 0 at the next fold', async () => {
    const now = new Date();
    const tenant = await createTenant();
    await countedFromTwoConnections(tenant);
    await foldStatsStripes(harness.db, now);
    // A message moved into the folded hour, then delivered: new stripe rows beside stripe 0. Its
    // latency is not the first delivery's, so the quantiles tell whether both were added up.
    const [late] = await storeMessages(tenant, [{ status: 'sent', created_at: threeHoursAgo(), country: 'US' }]);
    await moveMessageStatus(harness.db, late, 'sent', 'delivered', { delivered_at: new Date(threeHoursAgo().getTime() + 20_000) });
    expect(await unfoldedPastRows(tenant, now)).to.have.length.above(0);
    const before = await statsAndScan(tenant);
    expect(byStatusOf(before.stats)).to.deep.equal(before.scan);

    expect(before.stats.totals.latencyMs).to.deep.equal({ p50: 2263, p95: 24_850 });

    await foldStatsStripes(harness.db, now);
    expect((await statsAndScan(tenant)).stats).to.deep.equal(before.stats);
    expect(await unfoldedPastRows(tenant, now)).to.have.lengthOf(0);
  });

  it('skips a counter row that a transaction holds instead of waiting for it, and folds it once it is free', async () => {
    const now = new Date();
    const tenant = await createTenant();
    await countedFromTwoConnections(tenant);
    const holder = await harness.db.transaction();
    try {
      const [held] = await holder('message_stats')
        .where({ account_id: tenant.accountId })
        .andWhereNot({ stripe: 0 })
        .orderBy('hour')
        .limit(1)
        .forUpdate()
        .select('stripe');
      await harness.db.transaction(async (trx) => {
        // Waiting for the held row would fail the fold rather than hang it.
        await trx.raw(`SET LOCAL lock_timeout = '2s'`);
        await foldStatsStripes(trx, now);
      });
      const left = (await unfoldedPastRows(tenant, now)).filter((row) => row.table === 'message_stats');
      expect(left.map((row) => row.stripe)).to.deep.equal([held.stripe]);
    } finally {
      await holder.rollback();
    }
    await foldStatsStripes(harness.db, now);
    expect(await unfoldedPastRows(tenant, now)).to.have.lengthOf(0);
    const { stats, scan } = await statsAndScan(tenant);
    expect(byStatusOf(stats)).to.deep.equal(scan);
  });

  it("folds this hour's rows of a connection that has closed, and leaves those of a connection still open", async () => {
    const now = new Date();
    const tenant = await createTenant();
    const [closed, open] = [connect(harness.database.url, 1), connect(harness.database.url, 1)];
    try {
      const stripeOf = async (db: Knex) => (await db.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const [closedStripe, openStripe] = [await stripeOf(closed), await stripeOf(open)];
      await closed.transaction((trx) => storeMessages(tenant, [{ status: 'pending', country: 'US', created_at: now }], trx));
      await open.transaction((trx) => storeMessages(tenant, [{ status: 'pending', country: 'GB', created_at: now }], trx));
      await closed.destroy();
      await eventually(
        async () => (await harness.db.raw('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ?', [closedStripe])).rows[0].n as number,
        (n) => n === 0,
        { what: 'the closed connection to end' },
      );
      const before = await statsAndScan(tenant);

      await foldStatsStripes(harness.db, now);
      const stripes = (await stripesOf(harness.db, tenant.accountId, now)).filter((row) => !row.past).map((row) => row.stripe);
      expect(stripes).to.include(openStripe).and.not.include(closedStripe);
      expect(stripes).to.include(0);
      expect((await statsAndScan(tenant)).stats).to.deep.equal(before.stats);
    } finally {
      await closed.destroy();
      await open.destroy();
    }
  });

  it('moves at most the rows it is given at a time', async () => {
    const now = new Date();
    const tenant = await createTenant();
    await countedFromTwoConnections(tenant);
    expect(await foldMessageStats(harness.db, startOfHour(now.getTime()), 1)).to.equal(1);
    expect(await unfoldedPastRows(tenant, now)).to.have.length.above(0);
  });

  it('runs as a scheduled job every ten minutes', async () => {
    const now = new Date();
    const tenant = await createTenant();
    await countedFromTwoConnections(tenant);
    const schedules = await harness.dispatch.boss.getSchedules(QUEUES.foldStats.name);
    expect(schedules.map((schedule) => schedule.cron)).to.deep.equal(['*/10 * * * *']);
    await harness.dispatch.boss.send(QUEUES.foldStats.name, {});
    await eventually(
      () => unfoldedPastRows(tenant, now),
      (rows) => rows.length === 0,
      { what: "the job to fold the tenant's past hours" },
    );
  });
});

describe('the statistics read', () => {
  it('leaves out a failure code whose stripes add up to none', async () => {
    const tenant = await createTenant();
    const hour = startOfHour(Date.now() - 2 * HOUR_MS)
      .toISOString()
      .slice(0, 19);
    await harness.db.raw(
      `INSERT INTO message_stats (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost)
       VALUES (?, ?, 0, 'US', 1, 0, 0, 0, 1, 0, 0), (?, ?, 0, 'US', 2, 0, 1, 0, -1, 0, 0)`,
      [tenant.accountId, hour, tenant.accountId, hour],
    );
    await harness.db.raw(
      `INSERT INTO message_stat_details (account_id, hour, route_id, country, stripe, kind, key, count)
       VALUES (?, ?, 0, 'US', 1, 'failure', 'provider_rejected', 1), (?, ?, 0, 'US', 2, 'failure', 'provider_rejected', -1)`,
      [tenant.accountId, hour, tenant.accountId, hour],
    );
    const stats = await messageStats(harness.db, { accountId: tenant.accountId, groupBy: 'country' });
    expect(stats.totals.byStatus.sent).to.equal(1);
    expect(stats.totals.failures).to.deep.equal([]);
    expect(stats.groups.map((group) => group.failures)).to.deep.equal([[]]);
  });
});
