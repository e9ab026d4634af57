// dispatch inbound list|tail (customer API, through the SDK): the messages handsets sent to the account's numbers.
import { Command } from 'commander';
import type { InboundMessage, Page } from '../../sdk/index.ts';
import { customerOptions, pageFlags, pageQuery, type PageOptions, positiveInteger, run, timestamp } from '../context.ts';
import { follow } from '../follow.ts';
import { InboundTail } from '../inbound-tail.ts';
import { EXIT, pageTable } from '../output.ts';

const inboundLine = (message: InboundMessage) =>
  [
    message.received_at,
    message.id,
    `${message.from} -> ${message.to}`,
    message.keyword ? `[${message.keyword}]` : '',
    message.complete ? '' : '(incomplete)',
    JSON.stringify(message.body),
  ]
    .filter((part) => part !== '')
    .join('  ');

const showPage = (page: Page<InboundMessage>) =>
  pageTable(page, ['inbound message', 'inbound messages'], ['ID', 'From', 'To', 'Body', 'Keyword', 'Received'], (message) => [
    message.id,
    message.from,
    message.to,
    message.body,
    message.keyword,
    message.received_at,
  ]);

interface ListOptions extends PageOptions {
  from?: string;
  to?: string;
}

export function inboundCommand(): Command {
  const inbound = new Command('inbound').description('Read the messages handsets send to your numbers (replies, STOP...)');

  customerOptions(
    pageFlags(
      inbound
        .command('list')
        .description('List inbound messages, newest first (--json prints {data, pagination})')
        .option('--from <number>', 'only messages from this handset (E.164)')
        .option('--to <number>', 'only messages to this number of yours (E.164, or a short code)'),
      'messages',
    ),
  ).action((options: ListOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (
        await sdk()
      ).inboundMessages.list({
        ...(options.from !== undefined && { from: options.from }),
        ...(options.to !== undefined && { to: options.to }),
        ...pageQuery(options),
      });
      out.result(page, () => showPage(page));
    }),
  );

  customerOptions(
    inbound
      .command('tail')
      .description('Print inbound messages as they arrive, oldest first, until Ctrl-C (--json: one JSON object per line)')
      .option('--interval <ms>', 'polling interval in milliseconds', positiveInteger, 1000)
      .option('--since <date-time>', 'start from this time instead of now', timestamp),
  ).action((options: { interval: number; since?: string }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const dispatch = await sdk();
      const since = options.since === undefined ? Date.now() : Date.parse(options.since);
      const tail = new InboundTail({ since, list: (query) => dispatch.inboundMessages.list({ ...query, limit: 100 }) });
      out.note(`Following inbound messages since ${new Date(since).toISOString()} (Ctrl-C to stop)`);
      await follow(out, () => tail.poll(), inboundLine, options.interval);
      return EXIT.ok;
    }),
  );

  return inbound;
}
