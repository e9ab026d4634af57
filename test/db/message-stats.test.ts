import { expect } from 'chai';
import type { Knex } from 'knex';
import { beginSubmissions, settleSubmission } from '../../db/message-attempts.ts';
import { forEachBucketCount, forEachPair, readMessageStats } from '../../db/message-stats.ts';
import { insertMessages, markMessagesSent, moveMessageStatus, type NewMessage } from '../../db/messages.ts';
import { newId } from '../../domain/ids.ts';
import { foldStatsStripes, messageStats } from '../../domain/stats.ts';
import { createTenant, sendingTenant, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { beforeMigration } from '../support/sibling-database.ts';

const message = (tenant: Tenant, spec: Partial<NewMessage> = {}): NewMessage => ({
  id: newId('msg'),
  account_id: tenant.accountId,
  api_key_id: null,
  to: '+12127000042',
  from: 'Dispatch',
  body: 'Hi',
  status: 'pending',
  encoding: 'GSM-7',
  segments: 1,
  cost: '0.0100',
  currency: 'USD',
  country: 'US',
  route_id: null,
  requested_route_id: null,
  error: null,
  reference: null,
  ...spec,
});

const pairs = (text: string | null) => {
  const found: [string, number][] = [];
  forEachPair(text, (key, count) => found.push([key, count]));
  return found;
};

/** The delivered messages of a row's latency arrays, added up by bucket: [bucket, count] of each bucket counted. */
const buckets = (text: string | null) => {
  const sums = new Map<number, number>();
  forEachBucketCount(text, (bucket, count) => sums.set(bucket, (sums.get(bucket) ?? 0) + count));
  return [...sums].filter(([, count]) => count !== 0).sort(([a], [b]) => a - b);
};

/** The account's counters over the last day and the next hour, every group and stripe added up. */
const wholeDayOf = async (db: Knex, accountId: string) =>
  (await readMessageStats(db, { accountId, from: new Date(Date.now() - 86_400_000), to: new Date(Date.now() + 3_600_000), interval: null, groupBy: [] }))[0];

/** The details the triggers keep for an account, summed over stripes and hours: [country, kind, key, count]. */
async function detailsOf(db: Knex, accountId: string): Promise<[string, string, string, number][]> {
  const { rows } = await db.raw(
    `SELECT nullif(country, '') AS country, kind, key, sum(count)::int AS count FROM message_stat_details WHERE account_id = ? GROUP BY 1, 2, 3 HAVING sum(count) <> 0 ORDER BY 1, 2, 3`,
    [accountId],
  );
  return rows.map((row: { country: string; kind: string; key: string; count: number }) => [row.country, row.kind, row.key, row.count]);
}

/** The counters of the account over the last day, summed over every stripe, and what a scan of its messages says. */
async function countersAndScan(db: Knex, accountId: string) {
  const now = Date.now();
  const selection = { accountId, from: new Date(now - 86_400_000), to: new Date(now + 3_600_000), interval: null, groupBy: ['country' as const] };
  const rows = await readMessageStats(db, selection);
  // A group whose messages all moved away keeps a row of zeros: it has no messages.
  const counters = rows
    .map((row) => ({ country: row.country, pending: row.pending, sent: row.sent, delivered: row.delivered, failed: row.failed, cost: Number(row.cost) }))
    .filter((row) => row.pending + row.sent + row.delivered + row.failed > 0);
  const scan = await db('messages')
    .where({ account_id: accountId })
    .andWhere('created_at', '>', new Date(now - 86_400_000))
    .groupBy('country')
    .orderBy('country')
    .select(
      'country',
      db.raw(`count(*) FILTER (WHERE status = 'pending')::int AS pending`),
      db.raw(`count(*) FILTER (WHERE status = 'sent')::int AS sent`),
      db.raw(`count(*) FILTER (WHERE status = 'delivered')::int AS delivered`),
      db.raw(`count(*) FILTER (WHERE status = 'failed')::int AS failed`),
      db.raw('sum(cost)::float AS cost'),
    );
  return { counters, scan, details: await detailsOf(db, accountId) };
}

describe('the message statistics triggers', () => {
  it('count a multi-row insert and each status change, and move a message whose time changes to its hour', async () => {
    const tenant = await createTenant();
    const rows = [message(tenant), message(tenant), message(tenant, { country: 'GB', to: '+447400123456' }), message(tenant, { country: null })];
    await insertMessages(harness.db, rows);
    await moveMessageStatus(harness.db, rows[0].id, 'pending', 'sent', { route_id: null });
    await moveMessageStatus(harness.db, rows[1].id, 'pending', 'failed', {
      cost: '0.0000',
      error: { type: 'provider_error', code: 'provider_rejected', message: 'No' },
    });
    // A change the statistics do not read adds nothing.
    await harness
      .db('messages')
      .whereIn(
        'id',
        rows.map((row) => row.id),
      )
      .increment('attempts', 1);
    const { counters, scan, details } = await countersAndScan(harness.db, tenant.accountId);
    expect(counters).to.deep.equal(scan);
    expect(counters.map((row) => row.country)).to.deep.equal(['GB', 'US', null]);
    expect(details).to.deep.equal([['US', 'failure', 'provider_rejected', 1]]);

    await harness
      .db('messages')
      .where({ id: rows[2].id })
      .update({ created_at: new Date(Date.now() - 2 * 86_400_000) });
    const moved = await countersAndScan(harness.db, tenant.accountId);
    expect(moved.counters).to.deep.equal(moved.scan);
    expect(moved.counters.map((row) => row.country)).to.deep.equal(['US', null]);
  });

  it('bucket the latency of a delivery from acceptance to delivered_at', async () => {
    const tenant = await createTenant();
    const [stored] = await insertMessages(harness.db, [message(tenant)]);
    // 2 s: 2 * log2(2000 / 50) = 10.6, so bucket 11, [1,600 ms, 2,263 ms).
    await moveMessageStatus(harness.db, stored.id, 'pending', 'delivered', { delivered_at: new Date(stored.created_at.getTime() + 2000) });
    expect(buckets((await wholeDayOf(harness.db, tenant.accountId)).latency)).to.deep.equal([[11, 1]]);
    expect((await countersAndScan(harness.db, tenant.accountId)).details).to.deep.equal([]);
  });

  it('take a delivery back from its bucket when its message moves to another hour', async () => {
    const tenant = await createTenant();
    const [stored] = await insertMessages(harness.db, [message(tenant)]);
    await moveMessageStatus(harness.db, stored.id, 'pending', 'delivered', { delivered_at: new Date(stored.created_at.getTime() + 2000) });
    // Moved back two days, so its delivery took two days: out of the range, and out of bucket 11.
    await harness
      .db('messages')
      .where({ id: stored.id })
      .update({ created_at: new Date(stored.created_at.getTime() - 2 * 86_400_000) });
    expect(buckets((await wholeDayOf(harness.db, tenant.accountId)).latency)).to.deep.equal([]);
    const [threeDays] = await readMessageStats(harness.db, {
      accountId: tenant.accountId,
      from: new Date(Date.now() - 3 * 86_400_000),
      to: new Date(Date.now() + 3_600_000),
      interval: null,
      groupBy: [],
    });
    expect(buckets(threeDays.latency)).to.deep.equal([[34, 1]]);
  });

  it('let two transactions count messages of one account at once, each on its own stripe', async () => {
    const tenant = await createTenant();
    const first = await harness.db.transaction();
    const second = await harness.db.transaction();
    try {
      await insertMessages(first, [message(tenant)]);
      // With one shared counter row this insert would wait for `first` to end; the lock timeout makes that a failure.
      await second.raw(`SET LOCAL lock_timeout = '2s'`);
      await insertMessages(second, [message(tenant), message(tenant)]);
      await second.commit();
      await first.commit();
    } finally {
      if (!first.isCompleted()) await first.rollback();
      if (!second.isCompleted()) await second.rollback();
    }
    const stripes = await harness.db('message_stats').where({ account_id: tenant.accountId }).select('stripe', 'pending');
    expect(stripes.map((row) => Number(row.pending)).sort()).to.deep.equal([1, 2]);
    const { counters, scan } = await countersAndScan(harness.db, tenant.accountId);
    expect(counters).to.deep.equal(scan);
  });
});

describe('the migration that adds message statistics', function () {
  this.timeout(60_000);

  it('backfills the counters from the messages already stored', async () => {
    await beforeMigration('20261124040000_add_balance_alerts_and_message_stats.ts', async (db, applyIt) => {
      await db('accounts').insert({ id: 'acct_a', email: 'a@example.com', name: 'A' });
      const base = { account_id: 'acct_a', to: '+12127000042', from: 'Dispatch', body: 'Hi', encoding: 'GSM-7', segments: 1, currency: 'USD' };
      const created = new Date();
      await db('messages').insert([
        { ...base, id: 'msg_1', status: 'delivered', cost: 0.01, created_at: created, delivered_at: new Date(created.getTime() + 30) },
        { ...base, id: 'msg_2', status: 'undelivered', cost: 0.01, error: JSON.stringify({ type: 'provider_error', code: 'undelivered', message: 'No' }) },
        { ...base, id: 'msg_3', status: 'pending', cost: 0.01 },
      ]);
      await applyIt();
      // Read as they were then: the read of today's code needs the migrations after it.
      const rows = await db('message_stats')
        .where({ account_id: 'acct_a' })
        .select('stripe', 'pending', 'delivered', 'undelivered', db.raw('cost::float AS cost'));
      expect(rows.map((row) => [row.stripe, Number(row.pending), Number(row.delivered), Number(row.undelivered), row.cost])).to.deep.equal([
        [0, 1, 1, 1, 0.03],
      ]);
      expect(await detailsOf(db, 'acct_a')).to.deep.equal([
        [null, 'failure', 'undelivered', 1],
        [null, 'latency', '0', 1],
      ]);
    });
  });
});

describe('the migration that counts latency buckets in message_stats', function () {
  this.timeout(60_000);

  it("moves each stripe's bucket rows into its counter row's array, and keeps the failures", async () => {
    await beforeMigration('20261126030000_count_latency_buckets_in_message_stats.ts', async (db, applyIt) => {
      await db('accounts').insert({ id: 'acct_a', email: 'a@example.com', name: 'A' });
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString().slice(0, 19);
      const row = { account_id: 'acct_a', hour, route_id: 0, country: 'US' };
      const counters = { pending: 0, sent: 0, failed: 0, undelivered: 0, cost: 0 };
      await db('message_stats').insert([
        { ...row, ...counters, stripe: 0, delivered: 3 },
        { ...row, ...counters, stripe: 7, delivered: 0, undelivered: 1 },
      ]);
      await db('message_stat_details').insert([
        { ...row, stripe: 0, kind: 'latency', key: '2', count: 2 },
        { ...row, stripe: 0, kind: 'latency', key: '34', count: 1 },
        // Stripe 9's counter row was folded, its bucket row not yet.
        { ...row, stripe: 9, kind: 'latency', key: '2', count: 4 },
        { ...row, stripe: 7, kind: 'failure', key: 'undelivered', count: 1 },
      ]);
      await applyIt();
      const arrays = await db('message_stats').where({ account_id: 'acct_a' }).orderBy('stripe').select('stripe', 'delivered', 'latency');
      const slots = (counted: Record<number, number>) => Array.from({ length: 35 }, (_, bucket) => String(counted[bucket] ?? 0));
      expect(arrays.map((stripe) => [stripe.stripe, Number(stripe.delivered), stripe.latency])).to.deep.equal([
        [0, 3, slots({ 2: 2, 34: 1 })],
        [7, 0, null],
        [9, 0, slots({ 2: 4 })],
      ]);
      expect(await detailsOf(db, 'acct_a')).to.deep.equal([['US', 'failure', 'undelivered', 1]]);
      const all = await wholeDayOf(db, 'acct_a');
      expect([all.delivered, buckets(all.latency), pairs(all.failures)]).to.deep.equal([
        3,
        [
          [2, 6],
          [34, 1],
        ],
        [['undelivered', 1]],
      ]);
      // The triggers count a delivery into the array from now on.
      await db('messages').insert({
        id: 'msg_1',
        account_id: 'acct_a',
        to: '+12127000042',
        from: 'Dispatch',
        body: 'Hi',
        encoding: 'GSM-7',
        segments: 1,
        currency: 'USD',
        status: 'delivered',
        cost: 0.01,
        country: 'US',
        created_at: new Date(),
        delivered_at: new Date(Date.now() + 30),
      });
      expect(buckets((await wholeDayOf(db, 'acct_a')).latency)).to.deep.equal([
        [0, 1],
        [2, 6],
        [34, 1],
      ]);
      expect(await detailsOf(db, 'acct_a')).to.deep.equal([['US', 'failure', 'undelivered', 1]]);
    });
  });
});

describe('reading the latency arrays of a statistics row', () => {
  it("visits each stripe's counts bucket by bucket, negative ones too, and passes over the zeros", () => {
    const visited: [number, number][] = [];
    forEachBucketCount('{0,12,0,-3};{7,0,0,1024}', (bucket, count) => visited.push([bucket, count]));
    expect(visited).to.deep.equal([
      [1, 12],
      [3, -3],
      [0, 7],
      [3, 1024],
    ]);
    forEachBucketCount(null, () => expect.fail('a row without deliveries has no counts'));
  });
});

describe('the count of settled submissions', () => {
  const HOUR_MS = 3_600_000;

  /** The account's submissions by route and outcome, as the statistics of the last four hours answer them. */
  async function submitsByRoute(accountId: string) {
    const stats = await messageStats(harness.db, {
      accountId,
      from: new Date(Date.now() - 4 * HOUR_MS).toISOString(),
      to: new Date(Date.now() + HOUR_MS).toISOString(),
      groupBy: 'route',
    });
    return {
      groups: stats.groups.map((group) => ({ route_id: group.route_id, messages: group.messages, submits: group.submits, rate: group.submitSuccessRate })),
      totals: { submits: stats.totals.submits, rate: stats.totals.submitSuccessRate },
    };
  }

  /** The stripes of the account's submission rows. */
  const submitStripes = async (accountId: string) =>
    (await harness.db('message_stat_details').where({ account_id: accountId, kind: 'submit' }).pluck('stripe')).map(Number);

  it('counts a submission once, on its route, when it leaves submitting (settled alone or with the move to sent), and the fold keeps the counts', async () => {
    const tenant = await sendingTenant({ routes: [{}, {}] });
    const [firstRoute, secondRoute] = tenant.routeIds;
    // A minute into the hour three hours back: an hour the fold takes.
    const created_at = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 3 * HOUR_MS + 60_000);
    const [failedOver, refused] = await storeMessages(tenant, [
      { status: 'pending', country: 'US', created_at },
      { status: 'pending', country: 'US', created_at },
    ]);
    const [firstTry, refusal] = (await beginSubmissions(harness.db, [
      { messageId: failedOver, routeId: firstRoute },
      { messageId: refused, routeId: firstRoute },
    ])) as number[];
    expect(await settleSubmission(harness.db, firstTry, { outcome: 'retryable', errorCode: 'provider_unavailable' })).to.equal(true);
    expect(await settleSubmission(harness.db, refusal, { outcome: 'rejected', errorCode: 'provider_rejected' })).to.equal(true);
    const [secondTry] = (await beginSubmissions(harness.db, [{ messageId: failedOver, routeId: secondRoute }])) as number[];
    const [sent] = await markMessagesSent(harness.db, [
      { id: failedOver, route_id: secondRoute, provider_message_id: 'up-submits-1', attempt_id: secondTry, duration_ms: 5 },
    ]);
    expect(sent.status).to.equal('sent');

    const expected = {
      groups: [
        // The first route carried no message: its submissions alone make its group.
        { route_id: firstRoute, messages: 0, submits: { accepted: 0, rejected: 1, retryable: 1, unknown: 0 }, rate: 0 },
        { route_id: secondRoute, messages: 1, submits: { accepted: 1, rejected: 0, retryable: 0, unknown: 0 }, rate: 1 },
        // The refused message is still pending here, carried by no route.
        { route_id: null, messages: 1, submits: { accepted: 0, rejected: 0, retryable: 0, unknown: 0 }, rate: null },
      ],
      totals: { submits: { accepted: 1, rejected: 1, retryable: 1, unknown: 0 }, rate: 0.3333 },
    };
    expect(await submitsByRoute(tenant.accountId)).to.deep.equal(expected);

    // Settled again: refused by the guard, and counted nothing.
    expect(await settleSubmission(harness.db, firstTry, { outcome: 'unknown', errorCode: 'provider_timeout' })).to.equal(false);
    expect(await settleSubmission(harness.db, secondTry, { outcome: 'rejected', errorCode: 'provider_rejected' })).to.equal(false);
    // Written again past the guard: only a move out of submitting counts.
    await harness.db('message_attempts').whereIn('id', [firstTry, refusal, secondTry]).update({ outcome: 'unknown', duration_ms: 7 });
    await harness.db('message_attempts').whereIn('id', [firstTry, refusal, secondTry]).update({ duration_ms: 8 });
    expect(await submitsByRoute(tenant.accountId)).to.deep.equal(expected);

    expect((await submitStripes(tenant.accountId)).every((stripe) => stripe !== 0)).to.equal(true);
    await foldStatsStripes(harness.db, new Date());
    expect(await submitStripes(tenant.accountId)).to.satisfy((stripes: number[]) => stripes.length > 0 && stripes.every((stripe) => stripe === 0));
    expect(await submitsByRoute(tenant.accountId)).to.deep.equal(expected);
  });
});

describe('the migration that counts submissions', function () {
  this.timeout(60_000);

  it('counts the submissions already settled once, and those settled after it as they settle', async () => {
    await beforeMigration('20261129010000_count_submit_outcomes.ts', async (db, applyIt) => {
      await db('accounts').insert({ id: 'acct_a', email: 'a@example.com', name: 'A' });
      const base = { account_id: 'acct_a', to: '+12127000042', from: 'Dispatch', body: 'Hi', encoding: 'GSM-7', segments: 1, currency: 'USD', cost: 0.01 };
      await db('messages').insert([
        { ...base, id: 'msg_1', status: 'sent', country: 'US', route_id: 2 },
        { ...base, id: 'msg_2', status: 'pending', country: 'GB' },
      ]);
      await db('message_attempts').insert([
        { message_id: 'msg_1', route_id: 1, outcome: 'retryable' },
        { message_id: 'msg_1', route_id: 2, outcome: 'accepted' },
        { message_id: 'msg_2', route_id: 1, outcome: 'submitting' },
      ]);
      await applyIt();
      const counted = async () =>
        (
          await db('message_stat_details')
            .where({ account_id: 'acct_a', kind: 'submit' })
            .orderBy(['route_id', 'country', 'key'])
            .select('route_id', 'country', 'key', 'stripe', 'count')
        ).map((row) => [row.route_id, row.country, row.key, row.stripe, Number(row.count)]);
      expect(await counted()).to.deep.equal([
        [1, 'US', 'retryable', 0, 1],
        [2, 'US', 'accepted', 0, 1],
      ]);
      await db('message_attempts').where({ message_id: 'msg_2', outcome: 'submitting' }).update({ outcome: 'unknown' });
      const [pid] = (await db('message_stat_details').where({ account_id: 'acct_a', country: 'GB' }).pluck('stripe')).map(Number);
      expect(pid).to.not.equal(0);
      expect(await counted()).to.deep.equal([
        [1, 'GB', 'unknown', pid, 1],
        [1, 'US', 'retryable', 0, 1],
        [2, 'US', 'accepted', 0, 1],
      ]);
    });
  });
});
