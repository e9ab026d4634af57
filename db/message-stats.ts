import type { Knex } from 'knex';
import { runPrepared } from './statements.ts';
import { STRIPE_OF_EXITED_BACKEND } from './messages.ts';

/**
 * Reads the message statistics that the triggers of migrations 20261124040000, 20261126030000 and
 * 20261129010000 keep in message_stats and message_stat_details (hour buckets in UTC, one row per
 * backend stripe): a read sums the stripes of the range's hours, never a message.
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

/** One group's sums (the whole selection's when nothing is grouped). */
export interface StatsRow extends StatsKey {
  pending: number;
  sent: number;
  delivered: number;
  failed: number;
  undelivered: number;
  cost: string;
  min_currency: string | null;
  max_currency: string | null;
  /** `<code>:<count>` pairs, comma-separated, a code once per stripe that counted it; null when nothing failed. */
  failures: string | null;
  /** Settled submissions to upstreams as `<outcome>:<count>` pairs, like `failures`; null when none was counted. */
  submits: string | null;
  /** Delivered messages by latency bucket: each stripe's counts as an array literal (`{0,3,...}`), `;`-separated; null when no stripe counted a delivery. */
  latency: string | null;
}

/** Calls `visit` with each `<key>:<count>` pair of a row's failures or submits, in no particular order. */
export function forEachPair(pairs: string | null, visit: (key: string, count: number) => void): void {
  if (pairs === null) return;
  let start = 0;
  while (start < pairs.length) {
    const comma = pairs.indexOf(',', start);
    const end = comma === -1 ? pairs.length : comma;
    const separator = pairs.lastIndexOf(':', end);
    visit(pairs.slice(start, separator), Number(pairs.slice(separator + 1, end)));
    start = end + 1;
  }
}

const [DIGIT_0, MINUS, COMMA, CLOSING_BRACE] = ['0', '-', ',', '}'].map((char) => char.charCodeAt(0));

/**
 * Calls `visit` with each bucket's count of each stripe's array in a row's latency, but for the
 * counts of 0 (most of them): read digit by digit, as a day by hour and country holds thousands.
 */
export function forEachBucketCount(arrays: string | null, visit: (bucket: number, count: number) => void): void {
  if (arrays === null) return;
  let bucket = 0;
  let count = 0;
  let negative = false;
  // The braces that open each array and the ';' between two are passed over like any other character.
  for (let index = 0; index < arrays.length; index++) {
    const code = arrays.charCodeAt(index);
    if (code >= DIGIT_0 && code <= DIGIT_0 + 9) count = count * 10 + (code - DIGIT_0);
    else if (code === MINUS) negative = true;
    else if (code === COMMA || code === CLOSING_BRACE) {
      if (count !== 0) visit(bucket, negative ? -count : count);
      bucket = code === COMMA ? bucket + 1 : 0;
      count = 0;
      negative = false;
    }
  }
}

/**
 * The selected keys, in the order groups are listed: period, account, route, country. They are
 * grouped as the counters store them (an hour as a timestamp, route 0 and country '' for "none")
 * and only the one row a group gets is turned into what the caller sees (`shown`).
 */
function keyColumns(selection: StatsSelection): { expression: string; name: string; shown: string }[] {
  const keys: { expression: string; name: string; shown: string }[] = [];
  const epochMs = '(extract(epoch FROM period_start) * 1000)::float8 AS period_start';
  if (selection.interval === 'hour') keys.push({ expression: 's.hour', name: 'period_start', shown: epochMs });
  if (selection.interval === 'day') keys.push({ expression: `date_trunc('day', s.hour)`, name: 'period_start', shown: epochMs });
  if (selection.groupBy.includes('account')) keys.push({ expression: 's.account_id', name: 'account_id', shown: 'account_id' });
  if (selection.groupBy.includes('route')) keys.push({ expression: 's.route_id', name: 'route_id', shown: 'nullif(route_id, 0) AS route_id' });
  if (selection.groupBy.includes('country')) keys.push({ expression: 's.country', name: 'country', shown: `nullif(country, '') AS country` });
  return keys;
}

/**
 * One row per group in one statement: one aggregation over the counter rows and the detail rows
 * together (`UNION ALL`), which adds up the counters and folds the stripes' latency arrays, the
 * failures by code and the submissions by outcome into one text each. A grouped read of many
 * hours thus costs the process a row per group, not a row per bucket, and the plan has no join to
 * choose: joining the counters' groups to the details' as two aggregates let a generic plan that
 * expected one group rescan the details' aggregate once per group (218 ms for 144 groups of a day
 * by hour, route and country, against 6 ms). The stripes are not summed first: a code may appear
 * in a text once per stripe (and with a count of 0), a latency array once per stripe, and the
 * reader adds them up, which costs PostgreSQL a third less than a second aggregation, and half
 * what adding the arrays up in SQL costs (`pgbench` of the statement alone). A group is answered
 * when it has counter rows or submissions: a route that only passed messages on, or refused them,
 * carried no message, and may have no counter row.
 */
export function statsStatement(selection: StatsSelection): { text: string; values: unknown[] } {
  const keys = keyColumns(selection);
  const names = keys.map(({ name }) => name);
  const keyed = (columns: string[]) => [...keys.map(({ expression, name }) => `${expression} AS ${name}`), ...columns].join(', ');
  const groupBy = (columns: string[]) => (columns.length === 0 ? '' : `GROUP BY ${columns.join(', ')}`);
  const range = `s.hour >= ($1::timestamptz AT TIME ZONE 'UTC') AND s.hour < ($2::timestamptz AT TIME ZONE 'UTC') ${selection.accountId === undefined ? '' : 'AND s.account_id = $3'}`;
  const counters = ['pending', 'sent', 'delivered', 'failed', 'undelivered'];
  const text = `WITH summed AS (
       SELECT ${keyed([...counters.map((counter) => `s.${counter}`), 's.cost', 'a.currency', 's.latency', 'NULL AS kind', 'NULL AS key', 'NULL::int8 AS count'])}
       FROM message_stats s JOIN accounts a ON a.id = s.account_id
       WHERE ${range}
       UNION ALL
       SELECT ${keyed([...counters.map(() => 'NULL'), 'NULL', 'NULL', 'NULL', 's.kind', 's.key', 's.count'])}
       FROM message_stat_details s
       WHERE ${range}
     )
     SELECT ${[
       ...keys.map(({ shown }) => shown),
       // A group of submissions alone has no counter row to add up.
       ...counters.map((counter) => `coalesce(sum(${counter}), 0)::int8 AS ${counter}`),
       'coalesce(sum(cost), 0) AS cost',
       'min(currency) AS min_currency',
       'max(currency) AS max_currency',
       `string_agg(key || ':' || count, ',') FILTER (WHERE kind = 'failure') AS failures`,
       `string_agg(key || ':' || count, ',') FILTER (WHERE kind = 'submit') AS submits`,
       `string_agg(latency::text, ';') AS latency`,
     ].join(', ')}
     FROM summed
     ${groupBy(names)}
     HAVING count(pending) > 0 OR count(*) FILTER (WHERE kind = 'submit') > 0
     ${names.length === 0 ? '' : `ORDER BY ${names.join(', ')}`}`;
  return { text, values: [selection.from.toISOString(), selection.to.toISOString(), ...(selection.accountId === undefined ? [] : [selection.accountId])] };
}

/**
 * Per group (or for the whole selection when nothing is grouped): counts by status, cost, failures
 * by code, delivered messages by latency bucket, submissions by outcome. Unnamed, so planned for each call's range: as a
 * prepared statement its generic plan expected one row and sorted some 1,500 to group them, where
 * a plan for the call's values hashes them.
 */
export async function readMessageStats(db: Knex, selection: StatsSelection): Promise<StatsRow[]> {
  return runPrepared<StatsRow>(db, statsStatement(selection));
}

/** A column a fold adds up: how the moved rows are summed, and how that sum is added to stripe 0's. */
const summed = (column: string) => ({ column, sum: `sum(${column})`, add: `t.${column} + excluded.${column}` });
// Either array may be null (nothing delivered counted); add_counts is strict.
const summedLatency = { column: 'latency', sum: 'sum_counts(latency)', add: 'coalesce(add_counts(t.latency, excluded.latency), t.latency, excluded.latency)' };

/** What a fold moves: each table's key columns (less the stripe) and the columns it adds up. */
const FOLDED = [
  {
    table: 'message_stats',
    keys: ['account_id', 'hour', 'route_id', 'country'],
    sums: [...['pending', 'sent', 'delivered', 'failed', 'undelivered', 'cost'].map(summed), summedLatency],
  },
  { table: 'message_stat_details', keys: ['account_id', 'hour', 'route_id', 'country', 'kind', 'key'], sums: [summed('count')] },
];

/**
 * Moves up to `limit` stripe rows into stripe 0, in one statement: those of the hours before $1,
 * and those of any hour whose backend has exited (pools close idle connections, and the next
 * connection counts on a stripe of its own). The rows are deleted and their sums added to stripe
 * 0 in one snapshot, so a read sees the same totals before and after. A row that a transaction
 * holds (a late delivery report counting into its hour) is skipped, so a fold never waits for the
 * send path; and since only folds write stripe 0, the send path waits for a fold at most on a row
 * the fold has taken, for one statement.
 */
function foldStatement({ table, keys, sums }: (typeof FOLDED)[number]): string {
  const row = [...keys, 'stripe'];
  return `WITH picked AS (
       SELECT ${row.join(', ')} FROM ${table}
       WHERE stripe <> 0
         AND (hour < ($1::timestamptz AT TIME ZONE 'UTC') OR ${STRIPE_OF_EXITED_BACKEND})
       ORDER BY hour LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), moved AS (
       DELETE FROM ${table} t USING picked p WHERE ${row.map((column) => `t.${column} = p.${column}`).join(' AND ')}
       RETURNING t.*
     ), folded AS (
       INSERT INTO ${table} AS t (${[...row, ...sums.map(({ column }) => column)].join(', ')})
       SELECT ${keys.join(', ')}, 0, ${sums.map(({ sum }) => sum).join(', ')} FROM moved GROUP BY ${keys.join(', ')}
       ON CONFLICT (${row.join(', ')}) DO UPDATE SET ${sums.map(({ column, add }) => `${column} = ${add}`).join(', ')}
     )
     SELECT count(*)::int AS moved FROM moved`;
}

/**
 * Folds the stripe rows of the hours before `before`, and those of backends that have exited,
 * into stripe 0, up to `limit` rows of each table (message_stats and message_stat_details); answers the larger of the two counts moved, so
 * that a caller folds again while it equals `limit`.
 */
export async function foldMessageStats(db: Knex, before: Date, limit: number): Promise<number> {
  const moved = await Promise.all(
    FOLDED.map(async (table) => (await runPrepared<{ moved: number }>(db, { text: foldStatement(table), values: [before.toISOString(), limit] }))[0].moved),
  );
  return Math.max(...moved);
}
