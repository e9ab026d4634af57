// dispatch send, dispatch messages get|list (customer API, through the SDK).
import { Command, Option } from 'commander';
import type { Message, Page } from '../../sdk/index.ts';
import { customerOptions, pageFlags, pageQuery, type PageOptions, positiveInteger, run, timestamp } from '../context.ts';
import { fields, money, table } from '../output.ts';

const STATUSES = ['pending', 'sent', 'delivered', 'failed', 'undelivered'] as const;

export const showMessage = (message: Message) =>
  fields([
    ['ID', message.id],
    ['Status', message.status],
    ['To', message.to],
    ['From', message.from],
    ['Body', message.body],
    ['Segments', `${message.segments} (${message.encoding})`],
    ['Cost', money(message.cost, message.currency)],
    ['Route', message.route_id],
    ['Attempts', message.attempts],
    ['Reference', message.reference],
    ['Error', message.error && `${message.error.message} (${message.error.code})`],
    ['Created', message.created_at],
    ['Sent', message.sent_at],
    ['Delivered', message.delivered_at],
    ['Failed', message.failed_at],
  ]);

export const messageTable = (messages: Message[]) =>
  table(
    ['ID', 'To', 'From', 'Status', 'Cost', 'Error', 'Created'],
    messages.map((message) => [message.id, message.to, message.from, message.status, money(message.cost, message.currency), message.error?.code, message.created_at]),
  );

const showPage = (page: Page<Message>) => {
  if (page.data.length === 0) return page.pagination.total === 0 ? 'No messages.' : `No messages on page ${page.pagination.page} (${page.pagination.total} in all).`;
  const { page: number, pages, total } = page.pagination;
  return `${messageTable(page.data)}\nPage ${number} of ${pages} (${total} message${total === 1 ? '' : 's'})${page.pagination.has_more ? `: --page ${number + 1} for more` : ''}`;
};

interface SendOptions {
  to: string;
  from: string;
  body: string;
  reference?: string;
  routeId?: number;
  idempotencyKey?: string;
}

export function sendCommand(): Command {
  return customerOptions(
    new Command('send')
      .description('Send one SMS; it is accepted as pending and delivered in the background')
      .requiredOption('--to <number>', 'recipient, E.164 (e.g. +447400123456)')
      .requiredOption('--from <sender>', 'an approved sender ID of the account')
      .requiredOption('--body <text>', 'message text, up to 1,600 characters')
      .option('--reference <text>', 'your correlation reference, echoed in events')
      .option('--route-id <id>', 'send through this route only', positiveInteger)
      .option('--idempotency-key <key>', 'retrying with the same key never sends twice (default: a new UUID)'),
  ).action((options: SendOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const message = await (await sdk()).messages.send(
        {
          to: options.to,
          from: options.from,
          body: options.body,
          ...(options.reference !== undefined && { reference: options.reference }),
          ...(options.routeId !== undefined && { route_id: options.routeId }),
        },
        { idempotencyKey: options.idempotencyKey },
      );
      out.result(message, () => showMessage(message));
    }),
  );
}

interface ListOptions extends PageOptions {
  status?: Message['status'];
  to?: string;
}

export function messagesCommand(): Command {
  const messages = new Command('messages').description('Read sent messages');

  customerOptions(messages.command('get').description('Show a message with its status, cost and timestamps').argument('<message-id>', 'msg_...')).action(
    (id: string, _options: object, command: Command) =>
      run(command, async ({ sdk, out }) => {
        const message = await (await sdk()).messages.get(id);
        out.result(message, () => showMessage(message));
      }),
  );

  customerOptions(
    pageFlags(
      messages
        .command('list')
        .description('List messages, newest first (--json prints {data, pagination})')
        .addOption(new Option('--status <status>', 'only messages in this status').choices(STATUSES))
        .option('--to <number>', 'only messages to this number'),
      'messages',
    ),
  ).action((options: ListOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (await sdk()).messages.list({
        ...(options.status !== undefined && { status: options.status }),
        ...(options.to !== undefined && { to: options.to }),
        ...pageQuery(options),
      });
      out.result(page, () => showPage(page));
    }),
  );

  return messages;
}
