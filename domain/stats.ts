import type { Knex } from 'knex';
import type { SubmissionOutcome } from '../db/message-attempts.ts';
import {
  foldMessageStats,
  forEachBucketCount,
  forEachPair,
  readMessageStats,
  type StatsDimension,
  type StatsKey,
  type StatsRow,
  type StatsSelection,
} from '../db/message-stats.ts';
import { MESSAGE_STATUSES, type MessageStatus } from '../db/messages.ts';
import { invalidRequest } from './errors.ts';
import { fromUnits, toUnits } from './money.ts';

const HOUR_MS = 3_600_000;
const DEFAULT_RANGE_MS = 24 * HOUR_MS;
const MAX_RANGE_MS = 366 * 24 * HOUR_MS;

export interface StatsRequest {
  accountId?: string;
  from?: string;
  to?: string;
  interval?: 'hour' | 'day';
  /** Comma-separated dimensions, already restricted by the document to those the caller may use. */
  groupBy?: string;
}

export interface StatsFigures {
  messages: number;
  byStatus: Record<MessageStatus, number>;
  deliveryRate: number | null;
  failures: { code: string; count: number }[];
  cost: string;
  latencyMs: { p50: number | null; p95: number | null };
  /**
   * Settled submissions to upstreams by outcome: one per route a message was offered to, counted
   * on that route (a message is counted on the route that carried it), in its message's hour.
   */
  submits: Record<SubmissionOutcome, number>;
  submitSuccessRate: number | null;
}

/** What a group is the figures of: its period (as a date), account, route and country, as selected. */
export type GroupKey = Omit<StatsKey, 'period_start'> & { period_start?: Date };

export interface Stats {
  from: Date;
  to: Date;
  interval: 'hour' | 'day' | null;
  groupBy: StatsDimension[];
  /** The one currency of every counted account; null when they differ or nothing was counted. */
  currency: string | null;
  totals: StatsFigures;
  groups: (GroupKey & StatsFigures)[];
}

/** The range asked for, widened to whole UTC hours (the counters' grain). */
function selectionOf(request: StatsRequest, now: Date): StatsSelection {
  const to = request.to === undefined ? now : new Date(request.to);
  const from = request.from === undefined ? new Date(to.getTime() - DEFAULT_RANGE_MS) : new Date(request.from);
  if (from.getTime() >= to.getTime()) throw invalidRequest('from', 'from must be before to.');
  if (to.getTime() - from.getTime() > MAX_RANGE_MS) throw invalidRequest('from', 'The range from from to to is at most 366 days.');
  const groupBy = request.groupBy === undefined ? [] : (request.groupBy.split(',') as StatsDimension[]);
  if (new Set(groupBy).size !== groupBy.length) throw invalidRequest('group_by', 'group_by names each dimension once.');
  return {
    accountId: request.accountId,
    from: new Date(Math.floor(from.getTime() / HOUR_MS) * HOUR_MS),
    to: new Date(Math.ceil(to.getTime() / HOUR_MS) * HOUR_MS),
    interval: request.interval ?? null,
    groupBy,
  };
}

/**
 * The latency buckets the counting trigger uses (migrations 20261124040000 and 20261126030000): bucket 0 is under
 * 50 ms, bucket i is [50 ms * 2^((i-1)/2), 50 ms * 2^(i/2)), the last is open-ended.
 */
const LAST_LATENCY_BUCKET = 34;
const bucketLower = (bucket: number) => (bucket === 0 ? 0 : 50 * 2 ** ((bucket - 1) / 2));
const bucketUpper = (bucket: number) => (bucket === LAST_LATENCY_BUCKET ? bucketLower(bucket) : 50 * 2 ** (bucket / 2));

/** The q-quantile of a latency histogram (a count per bucket), interpolated linearly within its bucket. */
function quantile(histogram: number[], delivered: number, q: number): number | null {
  if (delivered === 0) return null;
  const rank = q * delivered;
  let below = 0;
  for (let bucket = 0; bucket <= LAST_LATENCY_BUCKET; bucket++) {
    const count = histogram[bucket];
    if (count > 0 && below + count >= rank) {
      const lower = bucketLower(bucket);
      return Math.round(lower + ((bucketUpper(bucket) - lower) * (rank - below)) / count);
    }
    below += count;
  }
  return bucketLower(LAST_LATENCY_BUCKET);
}

/** What is added up for one group (or the totals) before its figures are worked out. */
interface Tally {
  byStatus: Record<MessageStatus, number>;
  cost: bigint;
  failures: Map<string, number>;
  /** Delivered messages per latency bucket, and their sum. */
  latency: number[];
  delivered: number;
  submits: Record<SubmissionOutcome, number>;
}

const emptyTally = (): Tally => ({
  byStatus: { pending: 0, sent: 0, delivered: 0, failed: 0, undelivered: 0 },
  cost: 0n,
  failures: new Map(),
  latency: new Array<number>(LAST_LATENCY_BUCKET + 1).fill(0),
  delivered: 0,
  submits: { accepted: 0, rejected: 0, retryable: 0, unknown: 0 },
});

/** Adds one row's sums to each of `tallies` (its group's and the totals), its pairs parsed once. */
function addRow(row: StatsRow, tallies: Tally[]): void {
  const cost = toUnits(row.cost);
  // Status by status rather than over MESSAGE_STATUSES: a day by hour, route and country adds a hundred rows and more.
  for (const tally of tallies) {
    tally.byStatus.pending += row.pending;
    tally.byStatus.sent += row.sent;
    tally.byStatus.delivered += row.delivered;
    tally.byStatus.failed += row.failed;
    tally.byStatus.undelivered += row.undelivered;
    tally.cost += cost;
  }
  forEachPair(row.failures, (code, count) => {
    for (const tally of tallies) tally.failures.set(code, (tally.failures.get(code) ?? 0) + count);
  });
  forEachPair(row.submits, (outcome, count) => {
    // The trigger counts only settled outcomes (migration 20261129010000): every key is one of these.
    for (const tally of tallies) tally.submits[outcome as SubmissionOutcome] += count;
  });
  forEachBucketCount(row.latency, (bucket, count) => {
    for (const tally of tallies) {
      tally.latency[bucket] += count;
      tally.delivered += count;
    }
  });
}

/** A share to 4 decimal places; null when there is nothing to share. */
const rate = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

const submitted = ({ accepted, rejected, retryable, unknown }: Tally['submits']) => accepted + rejected + retryable + unknown;

function figuresOf(tally: Tally): StatsFigures {
  const { delivered, undelivered, failed } = tally.byStatus;
  return {
    messages: MESSAGE_STATUSES.reduce((sum, status) => sum + tally.byStatus[status], 0),
    byStatus: tally.byStatus,
    deliveryRate: rate(delivered, delivered + undelivered + failed),
    // A code whose failures all moved on (a stripe counted one, another took it back) sums to 0.
    failures: [...tally.failures]
      .filter(([, count]) => count !== 0)
      .map(([code, count]) => ({ code, count }))
      .sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    cost: fromUnits(tally.cost),
    latencyMs: { p50: quantile(tally.latency, tally.delivered, 0.5), p95: quantile(tally.latency, tally.delivered, 0.95) },
    submits: tally.submits,
    submitSuccessRate: rate(tally.submits.accepted, submitted(tally.submits)),
  };
}

/** The keys a row's group is shown with: those the selection grouped by. */
function keyFields(row: StatsKey): GroupKey {
  const key: GroupKey = {};
  if (row.period_start !== undefined) key.period_start = new Date(row.period_start);
  if ('account_id' in row) key.account_id = row.account_id;
  if ('route_id' in row) key.route_id = row.route_id;
  if ('country' in row) key.country = row.country;
  return key;
}

/** Message statistics of a range from the counters: one account's (customer), or every account's or one's (admin). */
export async function messageStats(db: Knex, request: StatsRequest, now = new Date()): Promise<Stats> {
  const selection = selectionOf(request, now);
  const rows = await readMessageStats(db, selection);
  const grouped = selection.interval !== null || selection.groupBy.length > 0;
  const totals = emptyTally();
  const groups: Stats['groups'] = [];
  const currencies = new Set<string>();
  for (const row of rows) {
    if (row.min_currency !== null) currencies.add(row.min_currency);
    if (row.max_currency !== null) currencies.add(row.max_currency);
    if (!grouped) {
      addRow(row, [totals]);
      continue;
    }
    const tally = emptyTally();
    addRow(row, [tally, totals]);
    const figures = figuresOf(tally);
    // A route that only passed messages on, or refused them, has submissions but no message.
    if (figures.messages > 0 || submitted(figures.submits) > 0) groups.push(Object.assign(keyFields(row), figures));
  }
  return {
    from: selection.from,
    to: selection.to,
    interval: selection.interval,
    groupBy: selection.groupBy,
    currency: currencies.size === 1 ? [...currencies][0] : null,
    totals: figuresOf(totals),
    groups,
  };
}

/** Rows of each counter table moved per fold statement, so that one statement holds its rows briefly. */
const FOLD_BATCH = 5_000;

/**
 * Folds the counters of the hours before this one into one row per group: every connection that
 * counted into an hour left rows of its own stripe there. This hour's rows are left to the
 * connections that write them, but for those of connections that have closed. An hour still takes
 * late delivery reports after it ends, each into a new stripe row, which a later fold takes in
 * turn. Answers how many stripe rows it moved (of the larger table).
 */
export async function foldStatsStripes(db: Knex, now = new Date()): Promise<number> {
  const before = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  let total = 0;
  for (let moved = FOLD_BATCH; moved === FOLD_BATCH; total += moved) moved = await foldMessageStats(db, before, FOLD_BATCH);
  return total;
}
