import { expect } from 'chai';
import pg from 'pg';
import { seedStatsMessages, statsTotalsExact } from '../../scripts/bench/measure/stats.ts';
import { call, expectError } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { createAdminKey, eventually, sendingTenant, storeMessages, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const STATUSES = ['pending', 'sent', 'delivered', 'failed', 'undelivered'] as const;

interface Expected {
  messages: number;
  by_status: Record<string, number>;
  cost: number;
  failures: { code: string; count: number }[];
}

/** The figures of a set of messages, counted over the messages themselves. */
function countOver(rows: { status: string; cost: string; error: { code: string } | null }[]): Expected {
  const byStatus = Object.fromEntries(STATUSES.map((status) => [status, rows.filter((row) => row.status === status).length]));
  const failures = new Map<string, number>();
  for (const row of rows) if (row.status === 'failed' || row.status === 'undelivered') failures.set(row.error!.code, (failures.get(row.error!.code) ?? 0) + 1);
  return {
    messages: rows.length,
    by_status: byStatus,
    cost: rows.reduce((sum, row) => sum + Math.round(Number(row.cost) * 10_000), 0) / 10_000,
    failures: [...failures].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
  };
}

const figures = ({ messages, by_status, cost, failures }: Expected) => ({ messages, by_status, cost, failures });

const OUTCOMES = ['accepted', 'rejected', 'retryable', 'unknown'] as const;

/** Settled submissions by outcome, counted over the submission rows themselves. */
const submitsOver = (rows: { outcome: string }[]) =>
  Object.fromEntries(OUTCOMES.map((outcome) => [outcome, rows.filter((row) => row.outcome === outcome).length]));

/** Groups are listed in ascending order of each key, null last (PostgreSQL's order). */
const ascendingNullLast = (a: string | number | null, b: string | number | null): number => {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
};

describe('GET /stats and GET /admin/stats', function () {
  this.timeout(60_000);
  let tenant: Tenant & { routeIds: number[] };
  let usRoute: number;

  /** Sends, deliveries and failures over three routes and countries, a refusal with no route, a message still pending and one from two days ago. */
  before(async () => {
    tenant = await sendingTenant({
      balance: 20,
      routes: [
        { price: 0.1, prefixes: ['+1'], config: { outcome: 'delivered', dlr_delay_ms: 30 } },
        { price: 0.2, prefixes: ['+44'], config: { outcome: 'undelivered', dlr_delay_ms: 10 } },
        { price: 0.3, prefixes: ['+33'], config: { outcome: 'rejected' } },
      ],
    });
    usRoute = tenant.routeIds[0];
    const send = (to: string) => call('POST', '/messages/send', { auth: tenant.key, body: { to, from: 'Dispatch', body: 'Hi' } });
    for (const to of ['+12127000001', '+12127000002', '+12127000003', '+447400123456', '+447400123457', '+33612345678'])
      expect((await send(to)).status).to.equal(201);
    const bulk = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: ['+12127000004', '+99912345678'], from: 'Dispatch', body: 'Hi' },
    });
    expect(bulk.status).to.equal(201);
    await eventually(
      () => harness.db('messages').where({ account_id: tenant.accountId }).whereIn('status', ['pending', 'sent']).count({ n: '*' }),
      ([{ n }]) => Number(n) === 0,
      { timeoutMs: 20_000, what: 'every message settled' },
    );
    await storeMessages(tenant, [{ status: 'pending' }, { status: 'delivered', created_at: new Date(Date.now() - 2 * 86_400_000) }]);
  });

  /** The account's messages of the last 24 hours, as the table holds them. */
  const recentMessages = () =>
    harness
      .db('messages')
      .where({ account_id: tenant.accountId })
      .andWhere('created_at', '>', new Date(Date.now() - 86_400_000));

  /** The settled submissions of those messages, each with its route and its message's country. */
  const recentSubmissions = () =>
    harness
      .db('message_attempts as a')
      .join('messages as m', 'm.id', 'a.message_id')
      .where('m.account_id', tenant.accountId)
      .andWhere('m.created_at', '>', new Date(Date.now() - 86_400_000))
      .andWhereNot('a.outcome', 'submitting')
      .select('a.route_id', 'm.country', 'a.outcome');

  it('reports the last 24 hours by default, equal to a count over the messages', async () => {
    const response = await call('GET', '/stats', { auth: tenant.key });
    expect(response.status).to.equal(200);
    const stats = response.body.data;
    expect(stats).to.include({ object: 'stats', interval: null, currency: 'USD' });
    expect(stats.group_by).to.deep.equal([]);
    expect(stats.groups).to.deep.equal([]);
    const hours = (Date.parse(stats.to) - Date.parse(stats.from)) / 3_600_000;
    expect(hours).to.be.oneOf([24, 25]);

    const expected = countOver(await recentMessages());
    expect(expected.messages).to.equal(9);
    expect(figures(stats.totals)).to.deep.equal(figures(expected));
    const { delivered, undelivered, failed } = expected.by_status;
    expect(stats.totals.delivery_rate).to.equal(Math.round((delivered / (delivered + undelivered + failed)) * 10_000) / 10_000);
    // Six taken by the routes that carry them, one refused by the +33 route; none of the rest was offered to a route.
    expect(stats.totals.submits).to.deep.equal(submitsOver(await recentSubmissions()));
    expect(stats.totals.submits).to.deep.equal({ accepted: 6, rejected: 1, retryable: 0, unknown: 0 });
    expect(stats.totals.submit_success_rate).to.equal(0.8571);
  });

  it('reads the latency of the delivered messages from their histogram', async () => {
    const delivered = await recentMessages().where({ status: 'delivered' });
    const latencies = delivered.map((row) => row.delivered_at.getTime() - row.created_at.getTime()).sort((a, b) => a - b);
    const { latency_ms: latency } = (await call('GET', '/stats', { auth: tenant.key })).body.data.totals;
    // Interpolated within a bucket at most 2^0.5 wide; the first bucket is [0, 50 ms).
    expect(latency.p50).to.be.within(latencies[0] < 50 ? 0 : latencies[0] / 1.5, Math.max(latencies.at(-1)! * 1.5, 50));
    expect(latency.p95).to.be.within(latency.p50!, latencies.at(-1)! * 1.5);
  });

  it('groups by route and country, each group equal to a count over its messages and its submissions', async () => {
    const response = await call('GET', '/stats?group_by=route,country', { auth: tenant.key });
    expect(response.body.data.group_by).to.deep.equal(['route', 'country']);
    const rows = await recentMessages();
    const submissions = await recentSubmissions();
    // A message's group is the route that carried it; a submission's, the route it was made to.
    const keys = [...new Set([...rows, ...submissions].map((row) => JSON.stringify([row.route_id, row.country])))].map(
      (key) => JSON.parse(key) as [number | null, string | null],
    );
    const expected = keys
      .map(([routeId, country]) => ({
        route_id: routeId,
        country,
        ...figures(countOver(rows.filter((row) => row.route_id === routeId && row.country === country))),
        submits: submitsOver(submissions.filter((row) => row.route_id === routeId && row.country === country)),
      }))
      .sort((a, b) => ascendingNullLast(a.route_id, b.route_id) || ascendingNullLast(a.country, b.country));
    expect(response.body.data.groups.map(({ route_id, country, submits, ...group }) => ({ route_id, country, ...figures(group), submits }))).to.deep.equal(
      expected,
    );
    // A message the route rejected was carried by no route: like a refused or pending one, its route_id is null.
    // The route that rejected it lists its submission, with no message.
    expect(expected.map(({ route_id, country, messages }) => [route_id, country, messages])).to.deep.include.members([
      [usRoute, 'US', 4],
      [tenant.routeIds[1], 'GB', 2],
      [tenant.routeIds[2], 'FR', 0],
      [null, 'FR', 1],
      [null, null, 2],
    ]);
    const rejecting = response.body.data.groups.find((group) => group.route_id === tenant.routeIds[2])!;
    expect([rejecting.submits, rejecting.submit_success_rate, rejecting.delivery_rate]).to.deep.equal([
      { accepted: 0, rejected: 1, retryable: 0, unknown: 0 },
      0,
      null,
    ]);
    const us = response.body.data.groups.find((group) => group.route_id === usRoute)!;
    expect(us.delivery_rate).to.equal(1);
    expect(response.body.data.groups.find((group) => group.country === 'GB')!.delivery_rate).to.equal(0);
  });

  it('groups by country alone, and splits by hour with interval', async () => {
    const byCountry = (await call('GET', '/stats?group_by=country', { auth: tenant.key })).body.data.groups;
    expect(byCountry.map((group) => [group.country, group.messages])).to.deep.equal([
      ['FR', 1],
      ['GB', 2],
      ['US', 4],
      [null, 2],
    ]);
    expect(byCountry.every((group) => !('route_id' in group))).to.equal(true);

    const hourly = (await call('GET', '/stats?interval=hour', { auth: tenant.key })).body.data;
    expect(hourly.groups.length).to.be.within(1, 2);
    for (const group of hourly.groups) expect(Date.parse(group.period_start!) % 3_600_000).to.equal(0);
    expect(hourly.groups.reduce((sum, group) => sum + group.messages, 0)).to.equal(hourly.totals.messages);
  });

  it('counts a range by the time the messages were created, widened to whole hours', async () => {
    const from = new Date(Date.now() - 3 * 86_400_000);
    const to = new Date(Date.now() - 86_400_000);
    const old = (await call('GET', `/stats?from=${from.toISOString()}&to=${to.toISOString()}&interval=day`, { auth: tenant.key })).body.data;
    expect(old.from).to.equal(new Date(Math.floor(from.getTime() / 3_600_000) * 3_600_000).toISOString());
    expect(old.totals.messages).to.equal(1);
    expect(old.totals.by_status.delivered).to.equal(1);
    expect(old.groups).to.have.length(1);
    expect(Date.parse(old.groups[0].period_start!) % 86_400_000).to.equal(0);
  });

  it('lets the operator read one account, or every account grouped by account', async () => {
    const own = (await call('GET', '/stats?group_by=route', { auth: tenant.key })).body.data;
    const admin = await call('GET', `/admin/stats?account_id=${tenant.accountId}&group_by=account,route`, { auth: 'admin' });
    expect(admin.status).to.equal(200);
    expect(admin.body.data.currency).to.equal('USD');
    expect(admin.body.data.totals).to.deep.equal(own.totals);
    expect(
      admin.body.data.groups.map(({ account_id, ...group }) => {
        expect(account_id).to.equal(tenant.accountId);
        return group;
      }),
    ).to.deep.equal(own.groups);

    const everyone = (await call('GET', '/admin/stats?group_by=account', { auth: 'admin' })).body.data;
    const mine = everyone.groups.find((group) => group.account_id === tenant.accountId)!;
    const { account_id: _, ...figuresOfMine } = mine;
    expect(figuresOfMine).to.deep.equal(own.totals);
    expect(everyone.totals.messages).to.equal(everyone.groups.reduce((sum, group) => sum + group.messages, 0));
  });

  for (const [query, param] of [
    ['?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
    ['?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from'],
    ['?from=yesterday', 'from'],
    ['?interval=week', 'interval'],
    ['?group_by=account', 'group_by'],
    ['?group_by=route,route', 'group_by'],
  ] as const) {
    it(`answers 400 naming ${param} to ${query}`, async () => {
      expectError(await call('GET', `/stats${query}`, { auth: tenant.key }), 400, 'parameter_invalid', param);
    });
  }

  it('answers 400 to the operator naming a bad group', async () => {
    expectError(await call('GET', '/admin/stats?group_by=account,sender', { auth: 'admin' }), 400, 'parameter_invalid', 'group_by');
  });

  it('answers 403 to a key without sms:read', async () => {
    const key = await createAdminKey(tenant.accountId, { name: 'Balance only', permissions: ['balance:read'] });
    const response = await call('GET', '/stats', { auth: key.plain_key });
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.equal({ required_scope: 'sms:read' });
  });
});

describe('GET /admin/stats grouped by route: submissions to each route', function () {
  this.timeout(60_000);
  let primary: FakeHttpProvider;
  let backup: FakeHttpProvider;

  before(async () => {
    [primary, backup] = await Promise.all([FakeHttpProvider.start(), FakeHttpProvider.start()]);
  });

  after(async () => {
    await Promise.all([primary?.stop(), backup?.stop()]);
  });

  it('counts each route its own submissions by outcome, a message failed over counting one on each, with exact counts and rates', async () => {
    const httpRoute = (provider: FakeHttpProvider, extra: Record<string, unknown> = {}) => ({
      provider: 'http' as const,
      config: { url: provider.url, token: 'secret-token', ...extra },
      price: 0.01,
    });
    // The primary answers by the message's body: it takes one, refuses one for now (503, failed
    // over), lets one time out (failed over, as the route says), and refuses one for good (400,
    // the message fails). The backup takes whatever reaches it.
    const tenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 200, failover_on_timeout: true }), httpRoute(backup)] });
    const [primaryRoute, backupRoute] = tenant.routeIds;
    primary.behave(({ body }) => {
      if (body === 'retry') return { status: 503 };
      if (body === 'hang') return { hang: true };
      if (body === 'refuse') return { status: 400, body: { error: { code: 'invalid_destination', message: 'The number is not reachable.' } } };
      return { accept: true };
    });
    const ids: string[] = [];
    for (const body of ['take', 'retry', 'hang', 'refuse']) {
      const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body } });
      expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
      ids.push(sent.body.data.id);
    }
    const settled = await Promise.all(ids.map((id) => waitForMessage(tenant, id, (message) => message.status !== 'pending')));
    expect(settled.map((message) => [message.status, message.route_id])).to.deep.equal([
      ['sent', primaryRoute],
      ['sent', backupRoute],
      ['sent', backupRoute],
      ['failed', null],
    ]);

    const answer = await call('GET', `/admin/stats?account_id=${tenant.accountId}&group_by=route`, { auth: 'admin' });
    expect(answer.status).to.equal(200);
    const stats = answer.body.data;
    const health = stats.groups.map(({ route_id, messages, submits, submit_success_rate, delivery_rate }) => ({
      route_id,
      messages,
      submits,
      submit_success_rate,
      delivery_rate,
    }));
    expect(health).to.deep.equal([
      { route_id: primaryRoute, messages: 1, submits: { accepted: 1, rejected: 1, retryable: 1, unknown: 1 }, submit_success_rate: 0.25, delivery_rate: null },
      { route_id: backupRoute, messages: 2, submits: { accepted: 2, rejected: 0, retryable: 0, unknown: 0 }, submit_success_rate: 1, delivery_rate: null },
      // The refused message: carried by no route, and submitted to the primary only.
      { route_id: null, messages: 1, submits: { accepted: 0, rejected: 0, retryable: 0, unknown: 0 }, submit_success_rate: null, delivery_rate: 0 },
    ]);
    expect([stats.totals.submits, stats.totals.submit_success_rate]).to.deep.equal([{ accepted: 3, rejected: 1, retryable: 1, unknown: 1 }, 0.5]);

    // Every account's statistics, as the console's Routes view reads them: these routes serve this account alone.
    const everyone = (await call('GET', '/admin/stats?group_by=route', { auth: 'admin' })).body.data;
    const mine = everyone.groups.filter((group) => group.route_id === primaryRoute || group.route_id === backupRoute);
    expect(mine).to.deep.equal(stats.groups.filter((group) => group.route_id !== null));
  });
});

describe("the bench's statistics seed and check", function () {
  this.timeout(60_000);

  it('fill the counters through the trigger, so that GET /stats answers totals equal to a count over the seeded messages', async () => {
    const tenant = await sendingTenant();
    const pool = new pg.Pool({ connectionString: harness.database.url, max: 1 });
    try {
      await seedStatsMessages(pool, tenant.accountId, tenant.routeIds, 2_000);
      const stats = (await call('GET', '/stats?group_by=country', { auth: tenant.key })).body.data;
      expect(await statsTotalsExact(pool, tenant.accountId, stats)).to.deep.equal({ exact: true, answered: 2_000, counted: 2_000 });
      expect(stats.groups.map((group) => [group.country, group.messages])).to.deep.equal([
        ['DE', 400],
        ['FR', 400],
        ['GB', 400],
        ['IN', 400],
        ['US', 400],
      ]);
      expect(stats.totals.failures).to.deep.equal([
        { code: 'provider_rejected', count: 100 },
        { code: 'undelivered', count: 100 },
      ]);
      // The seeded median, read from the messages: the histogram's p50 lies in its bucket, at most 2^0.5 wide.
      const { rows } = await pool.query(
        `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at) * 1000) AS median FROM messages WHERE account_id = $1 AND status = 'delivered'`,
        [tenant.accountId],
      );
      expect(stats.totals.latency_ms.p50).to.be.within(rows[0].median / Math.SQRT2, rows[0].median * Math.SQRT2);
      // The account's counts by status take the seed in too: its message list's total is exact.
      expect((await call('GET', '/messages?limit=1', { auth: tenant.key })).body.pagination.total).to.equal(2_000);
    } finally {
      await pool.end();
    }
  });
});
