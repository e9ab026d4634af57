// dispatch balance, dispatch transactions, dispatch usage, dispatch stats (customer API, through the SDK).
import { Command, Option } from 'commander';
import type { BalanceTransaction, Page, Stats } from '../../sdk/index.ts';
import { customerOptions, pageFlags, pageQuery, type PageOptions, run, timestamp } from '../context.ts';
import { fields, money, pageTable, table } from '../output.ts';

const TRANSACTION_TYPES = ['credit', 'debit', 'refund', 'adjustment'] as const;
const PERIODS = ['day', 'month', 'all'] as const;
const GROUPS = ['route', 'country'] as const;

export function balanceCommand(): Command {
  return customerOptions(new Command('balance').description('Show the prepaid balance')).action((_options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const balance = await (await sdk()).balance.get();
      out.result(balance, () =>
        fields([
          ['Balance', money(balance.balance, balance.currency)],
          ['As of', balance.as_of],
        ]),
      );
    }),
  );
}

const showTransactions = (page: Page<BalanceTransaction>) =>
  pageTable(page, ['transaction', 'transactions'], ['ID', 'Type', 'Amount', 'Balance after', 'Message', 'Description', 'Created'], (row) => [
    row.id,
    row.type,
    money(row.amount, row.currency),
    money(row.balance_after, row.currency),
    row.message_id,
    row.description,
    row.created_at,
  ]);

interface TransactionOptions extends PageOptions {
  type?: BalanceTransaction['type'];
  messageId?: string;
}

export function transactionsCommand(): Command {
  return customerOptions(
    pageFlags(
      new Command('transactions')
        .description('List the changes of the balance, newest first (--json prints {data, pagination})')
        .addOption(new Option('--type <type>', 'only transactions of this type').choices(TRANSACTION_TYPES))
        .option('--message-id <id>', 'only the transactions of this message'),
      'transactions',
    ),
  ).action((options: TransactionOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (
        await sdk()
      ).balance.transactions({
        ...(options.type !== undefined && { type: options.type }),
        ...(options.messageId !== undefined && { message_id: options.messageId }),
        ...pageQuery(options),
      });
      out.result(page, () => showTransactions(page));
    }),
  );
}

export function usageCommand(): Command {
  return customerOptions(
    new Command('usage')
      .description('Count messages and their cost over a period')
      .addOption(new Option('--period <period>', 'since today, the 1st of the month or the start').choices(PERIODS).default('month')),
  ).action((options: { period: (typeof PERIODS)[number] }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const usage = await (await sdk()).usage.get({ period: options.period });
      out.result(usage, () =>
        fields([
          ['Period', `${usage.period} (${usage.starts_at} to ${usage.ends_at})`],
          ['Messages', usage.totals.messages],
          ['Cost', money(usage.totals.cost, usage.currency)],
          ...Object.entries(usage.by_status).map(([status, count]): [string, unknown] => [`  ${status}`, count]),
        ]),
      );
    }),
  );
}

const percent = (rate: number | null) => (rate === null ? '-' : `${(rate * 100).toFixed(1)}%`);
const latency = ({ p50, p95 }: Stats['totals']['latency_ms']) => (p50 === null ? '-' : `p50 ${p50} ms, p95 ${p95} ms`);

function showStats(stats: Stats): string {
  const currency = stats.currency ?? '';
  const totals = fields([
    ['Range', `${stats.from} to ${stats.to}`],
    ['Messages', stats.totals.messages],
    [
      'By status',
      Object.entries(stats.totals.by_status)
        .map(([status, count]) => `${status} ${count}`)
        .join(', '),
    ],
    ['Delivery rate', percent(stats.totals.delivery_rate)],
    ['Failures', stats.totals.failures.map(({ code, count }) => `${code} ${count}`).join(', ') || '-'],
    ['Cost', money(stats.totals.cost, currency)],
    ['Latency', latency(stats.totals.latency_ms)],
  ]);
  if (stats.groups.length === 0) return totals;
  const keys = [...(stats.interval ? ['period_start'] : []), ...stats.group_by.map((group) => (group === 'route' ? 'route_id' : group))] as (
    'period_start' | 'route_id' | 'country'
  )[];
  const rows = stats.groups.map((group) => [
    ...keys.map((key) => group[key] ?? '-'),
    group.messages,
    group.by_status.delivered,
    percent(group.delivery_rate),
    money(group.cost, currency),
    latency(group.latency_ms),
  ]);
  return `${totals}\n\n${table([...keys.map((key) => ({ period_start: 'Period', route_id: 'Route', country: 'Country' })[key]), 'Messages', 'Delivered', 'Rate', 'Cost', 'Latency'], rows)}`;
}

interface StatsOptions {
  from?: string;
  to?: string;
  interval?: 'hour' | 'day';
  groupBy?: string;
}

export function statsCommand(): Command {
  return customerOptions(
    new Command('stats')
      .description('Message statistics: counts by status, delivery rate, failures, cost and latency (default: the last 24 hours)')
      .option('--from <date-time>', 'start of the range (widened to its hour)', timestamp)
      .option('--to <date-time>', 'end of the range (default now)', timestamp)
      .addOption(new Option('--interval <interval>', 'split by UTC hour or day').choices(['hour', 'day']))
      .option('--group-by <groups>', `split by ${GROUPS.join(', ')} or both, comma-separated`),
  ).action((options: StatsOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const stats = await (
        await sdk()
      ).stats.get({
        ...(options.from !== undefined && { from: options.from }),
        ...(options.to !== undefined && { to: options.to }),
        ...(options.interval !== undefined && { interval: options.interval }),
        ...(options.groupBy !== undefined && { group_by: options.groupBy }),
      });
      out.result(stats, () => showStats(stats));
    }),
  );
}
