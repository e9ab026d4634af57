import { expect } from 'chai';
import type { Knex } from 'knex';
import { connect } from '../../db/connection.ts';
import { migrateLatest } from '../../db/migrate.ts';
import { forEachBucketCount, forEachPair, readMessageStats, statsStatement, type StatsSelection } from '../../db/message-stats.ts';
import { nodesOf, planOf, type PlanNode } from '../support/query-plans.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

const HOUR_MS = 3_600_000;
const COUNTRIES = ['US', 'GB', 'FR', 'DE', 'IN'];
const ROUTES = [1, 2];
const STRIPES = [101, 102];

/** Rows' `<key>:<count>` pairs added up by key. */
function summedPairs(texts: (string | null)[]): Record<string, number> {
  const sums: Record<string, number> = {};
  for (const pairs of texts) forEachPair(pairs, (key, count) => (sums[key] = (sums[key] ?? 0) + count));
  return sums;
}

/** Rows' latency arrays added up by bucket (the reader passes over the buckets that counted none). */
function summedBuckets(texts: (string | null)[]): Record<number, number> {
  const sums: Record<number, number> = {};
  for (const arrays of texts) forEachBucketCount(arrays, (bucket, count) => (sums[bucket] = (sums[bucket] ?? 0) + count));
  return sums;
}

/** How often each aggregation of a plan ran. */
const aggregateLoops = (plan: PlanNode): number[] => nodesOf(plan).flatMap((node) => (node['Node Type'] === 'Aggregate' ? [node['Actual Loops'] ?? 0] : []));

/**
 * The grouped statistics answer a day by hour, route and country: 240 groups. A plan that
 * expects one group, as a generic plan of the prepared statement may, must still read the
 * details once, not once per group. The trap is set by leaving the planner nothing but generic
 * plans and nested loops whose inner side is not materialized; a join of the counters' aggregate
 * to the details' falls into it here.
 */
describe('the statistics read under a plan that expects one group', function () {
  this.timeout(60_000);
  let database: { url: string; drop: () => Promise<void> };
  let db: Knex;
  const now = new Date();
  const dayAgo = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - 24 * HOUR_MS);

  before(async () => {
    database = await siblingDatabase();
    db = connect(database.url, 2);
    await migrateLatest(db);
    await db('accounts').insert({ id: 'acc_stats_plan', email: 'stats-plan@example.com', name: 'Stats plan' });
    await db.raw(
      `INSERT INTO message_stats (account_id, hour, route_id, country, stripe, pending, sent, delivered, failed, undelivered, cost, latency)
       SELECT 'acc_stats_plan', ?::timestamp + h * interval '1 hour', route_id, country, stripe, 0, 1, 10, 1, 0, 0.01,
              array(SELECT CASE WHEN b BETWEEN 10 AND 19 THEN 1 ELSE 0 END FROM generate_series(0, 34) AS b)
       FROM generate_series(0, 23) AS h CROSS JOIN unnest(?::int[]) AS route_id CROSS JOIN unnest(?::text[]) AS country CROSS JOIN unnest(?::int[]) AS stripe`,
      [dayAgo.toISOString().slice(0, 19), ROUTES, COUNTRIES, STRIPES],
    );
    await db.raw(
      `INSERT INTO message_stat_details (account_id, hour, route_id, country, stripe, kind, key, count)
       SELECT account_id, hour, route_id, country, stripe, d.kind, d.key, 1
       FROM message_stats CROSS JOIN (VALUES ('failure', 'provider_rejected')) AS d (kind, key)`,
    );
    await db.raw('ANALYZE message_stats, message_stat_details');
  });

  after(async () => {
    await db?.destroy();
    await database?.drop();
  });

  let prepared = 0;

  /** The plan of `text` run with `values` as a generic prepared statement that may only use nested loops, without materializing their inner side. */
  async function trappedPlan(text: string, values: unknown[]): Promise<PlanNode> {
    const name = `trapped_${++prepared}`;
    const trx = await db.transaction();
    try {
      await trx.raw('SET LOCAL plan_cache_mode = force_generic_plan');
      await trx.raw('SET LOCAL enable_hashjoin = off');
      await trx.raw('SET LOCAL enable_mergejoin = off');
      await trx.raw('SET LOCAL enable_material = off');
      const types = values.map(() => 'text').join(', ');
      await trx.raw(`PREPARE ${name} (${types}) AS ${text}`);
      // EXECUTE takes its arguments as literals, not as bound parameters.
      const literals = values.map((value) => `'${String(value).replaceAll("'", "''")}'`).join(', ');
      const { rows } = await trx.raw(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name} (${literals})`);
      await trx.raw(`DEALLOCATE ${name}`);
      return planOf(rows);
    } finally {
      await trx.rollback();
    }
  }

  it('shows the trap: a join of two aggregates rescans the inner one once per group', async () => {
    const join = `SELECT * FROM (SELECT hour, route_id, country, sum(sent) AS sent FROM message_stats WHERE account_id = $1 GROUP BY 1, 2, 3) c
      LEFT JOIN (SELECT hour, route_id, country, sum(count) AS count FROM message_stat_details WHERE account_id = $1 GROUP BY 1, 2, 3) d
      USING (hour, route_id, country)`;
    expect(Math.max(...aggregateLoops(await trappedPlan(join, ['acc_stats_plan'])))).to.be.greaterThan(1);
  });

  // The day of each seeded hour: the last 24 hours span one UTC day or two.
  const days = new Set(Array.from({ length: 24 }, (_, hour) => new Date(dayAgo.getTime() + hour * HOUR_MS).toISOString().slice(0, 10))).size;
  const selections: { what: string; selection: Omit<StatsSelection, 'from' | 'to'>; groups: number }[] = [
    {
      what: 'by hour, route and country',
      selection: { accountId: 'acc_stats_plan', interval: 'hour', groupBy: ['route', 'country'] },
      groups: 24 * ROUTES.length * COUNTRIES.length,
    },
    { what: 'by account and day', selection: { interval: 'day', groupBy: ['account'] }, groups: days },
    { what: 'for the whole range', selection: { accountId: 'acc_stats_plan', interval: null, groupBy: [] }, groups: 1 },
  ];

  for (const { what, selection, groups } of selections) {
    it(`reads each aggregation once ${what}, and answers every group`, async () => {
      const full: StatsSelection = { ...selection, from: dayAgo, to: new Date(dayAgo.getTime() + 25 * HOUR_MS) };
      const { text, values } = statsStatement(full);
      expect(aggregateLoops(await trappedPlan(text, values))).to.satisfy((loops: number[]) => loops.length > 0 && loops.every((n) => n === 1));
      const rows = await readMessageStats(db, full);
      expect(rows).to.have.length(groups);
      // Each stripe of each hour names its buckets and codes once in its group's texts; the reader adds them up.
      const counted = 24 * ROUTES.length * COUNTRIES.length * STRIPES.length;
      expect(summedBuckets(rows.map((row) => row.latency))).to.deep.equal(Object.fromEntries(Array.from({ length: 10 }, (_, index) => [10 + index, counted])));
      expect(summedPairs(rows.map((row) => row.failures))).to.deep.equal({ provider_rejected: counted });
    });
  }
});
