import type { Knex } from 'knex';

/**
 * Reads the message statistics that the triggers of migration 20261124040000 keep in
 * message_stats and message_stat_details (hour buckets in UTC, one row per backend stripe):
 * a read sums the stripes of the range's hours, never a message.
 */

export type StatsDimension = 'account' | 'route' | 'country';

export interface StatsSelection {
  /** Only this account's messages; every account's when omitted (admin). */
  accountId?: string;
  /** Whole UTC hours: from inclusive, to exclusive. */
  from: Date;
  to: Date;
  interval: 'hour' | 'day' | null;
  groupBy: StatsDimension[];
}

export interface StatsKey {
  /** Epoch milliseconds of the period's start (UTC). */
  period_start?: number;
  account_id?: string;
  route_id?: number | null;
  country?: string | null;
}

export interface StatsCountRow extends StatsKey {
  pending: string;
  sent: string;
  delivered: string;
  failed: string;
  undelivered: string;
  cost: string;
  min_currency: string | null;
  max_currency: string | null;
}

export interface StatsDetailRow extends StatsKey {
  kind: 'failure' | 'latency';
  /** `<key>:<count>` pairs, comma-separated: a failure code or a latency bucket, and how many. */
  counts: string;
}

/** A details row's `<key>:<count>` pairs. */
export const detailCounts = (row: Pick<StatsDetailRow, 'counts'>): [string, number][] =>
  row.counts.split(',').map((pair) => {
    const separator = pair.lastIndexOf(':');
    return [pair.slice(0, separator), Number(pair.slice(separator + 1))];
  });

/** The selected keys, in the order groups are listed: period, account, route, country. Route 0 and country '' are "none" in the counters. */
function keyColumns(selection: StatsSelection): { expression: string; name: string }[] {
  const keys: { expression: string; name: string }[] = [];
  if (selection.interval === 'hour') keys.push({ expression: '(extract(epoch FROM s.hour) * 1000)::float8', name: 'period_start' });
  if (selection.interval === 'day') keys.push({ expression: `(extract(epoch FROM date_trunc('day', s.hour)) * 1000)::float8`, name: 'period_start' });
  if (selection.groupBy.includes('account')) keys.push({ expression: 's.account_id', name: 'account_id' });
  if (selection.groupBy.includes('route')) keys.push({ expression: 'nullif(s.route_id, 0)', name: 'route_id' });
  if (selection.groupBy.includes('country')) keys.push({ expression: `nullif(s.country, '')`, name: 'country' });
  return keys;
}

function summed(db: Knex, table: string, selection: StatsSelection, sums: string, extraKeys: string[] = []) {
  const keys = keyColumns(selection).map(({ expression, name }) => `${expression} AS ${name}`);
  const positions = [...keys, ...extraKeys].map((_, index) => index + 1).join(', ');
  const account = selection.accountId === undefined ? '' : 'AND s.account_id = :accountId';
  const grouped = positions === '' ? '' : `GROUP BY ${positions} ORDER BY ${positions}`;
  return db.raw(
    `SELECT ${[...keys, ...extraKeys, sums].join(', ')}
     FROM ${table} s ${table === 'message_stats' ? 'JOIN accounts a ON a.id = s.account_id' : ''}
     WHERE s.hour >= (:from::timestamptz AT TIME ZONE 'UTC') AND s.hour < (:to::timestamptz AT TIME ZONE 'UTC') ${account}
     ${grouped}`,
    { from: selection.from.toISOString(), to: selection.to.toISOString(), ...(selection.accountId !== undefined && { accountId: selection.accountId }) },
  );
}

/** Per group and kind, the summed details as one text of `<key>:<count>` pairs: a row a group, not a row a bucket. */
function summedDetails(db: Knex, selection: StatsSelection) {
  const names = [...keyColumns(selection).map(({ name }) => name), 'kind'];
  const inner = summed(db, 'message_stat_details', selection, 'sum(s.count) AS count', ['s.kind', 's.key']);
  return db.raw(`SELECT ${names.join(', ')}, string_agg(key || ':' || count, ',') FILTER (WHERE count <> 0) AS counts FROM (?) AS d GROUP BY ${names.join(', ')}`, [inner]);
}

/** Counts by status and cost per group, and per group the failures by code and delivered messages by latency bucket. */
export async function readMessageStats(db: Knex, selection: StatsSelection): Promise<{ counts: StatsCountRow[]; details: StatsDetailRow[] }> {
  const [counts, details] = await Promise.all([
    summed(db, 'message_stats', selection, `sum(s.pending) AS pending, sum(s.sent) AS sent, sum(s.delivered) AS delivered, sum(s.failed) AS failed,
      sum(s.undelivered) AS undelivered, sum(s.cost) AS cost, min(a.currency) AS min_currency, max(a.currency) AS max_currency`),
    summedDetails(db, selection),
  ]);
  return { counts: counts.rows.filter((row: StatsCountRow) => row.pending !== null), details: details.rows.filter((row: StatsDetailRow) => row.counts !== null) };
}
