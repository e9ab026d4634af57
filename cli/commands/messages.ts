// dispatch send, dispatch messages get|list|cancel (customer API, through the SDK).
import { setTimeout as sleep } from 'node:timers/promises';
import { Command, Option } from 'commander';
import type { Dispatch, Message, Page } from '../../sdk/index.ts';
import {
  customerOptions,
  pageFlags,
  pageQuery,
  type PageOptions,
  positiveInteger,
  run,
  messageFields,
  scheduleFlags,
  type MessageOptions,
  timestamp,
} from '../context.ts';
import { EXIT, type ExitCode, exitCodeFor, fields, money, type Output, pageTable, UsageError } from '../output.ts';
import { showPreview } from '../preview.ts';

/** A message's statuses, for the lists' --status. */
export const MESSAGE_STATUSES = ['pending', 'sent', 'delivered', 'failed', 'undelivered'] as const;

/** A field shown only when it has a value: most messages are sent at once, alone, and have no scheduling fields. */
const optional = (key: string, value: unknown): [string, unknown][] => (value === null || value === undefined ? [] : [[key, value]]);

export const showMessage = (message: Message) =>
  fields([
    ['ID', message.id],
    ['Status', message.status],
    ['To', message.to],
    ['From', message.from],
    ['Body', message.body],
    ['Segments', `${message.segments} (${message.encoding}${message.smart_encoded ? ', look-alikes replaced' : ''})`],
    ['Cost', money(message.cost, message.currency)],
    ['Route', message.route_id],
    ['Attempts', message.attempts],
    ['Reference', message.reference],
    ...optional('Bulk', message.bulk_id),
    ['Error', message.error && `${message.error.message} (${message.error.code})`],
    ['Created', message.created_at],
    ...optional('Send at', message.send_at),
    ...optional('Validity', message.validity_period === null || message.validity_period === undefined ? null : `${message.validity_period} s`),
    ['Sent', message.sent_at],
    ['Delivered', message.delivered_at],
    ['Failed', message.failed_at],
  ]);

/** A page of messages, with a `Send at` column only when some message of the page is scheduled. */
const showPage = (page: Page<Message>) => {
  const scheduled = page.data.some((message) => message.send_at);
  return pageTable(page, ['message', 'messages'], ['ID', 'To', 'From', 'Status', 'Cost', 'Error', 'Created', ...(scheduled ? ['Send at'] : [])], (message) => [
    message.id,
    message.to,
    message.from,
    message.status,
    money(message.cost, message.currency),
    message.error?.code,
    message.created_at,
    ...(scheduled ? [message.send_at] : []),
  ]);
};

interface SendOptions extends MessageOptions {
  to: string;
  idempotencyKey?: string;
  dryRun?: boolean;
  wait?: boolean;
  timeout: number;
}

/**
 * The states a message never leaves. `sent` is not one of them: the upstream took the message
 * and its carrier's delivery report may still come, and the API does not tell a customer
 * whether its route reports deliveries. So `--wait` waits past `sent` until --timeout.
 */
const FINAL_STATES: readonly Message['status'][] = ['delivered', 'undelivered', 'failed'];
const WAIT_POLL_MS = 500;
const DEFAULT_WAIT_SECONDS = 60;

/** Polls the message until it is final or `timeoutSeconds` have passed; answers the last state read. */
async function waitForFinalState(client: Dispatch, message: Message, timeoutSeconds: number, out: Output): Promise<Message> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let current = message;
  while (!FINAL_STATES.includes(current.status) && Date.now() < deadline) {
    await sleep(Math.min(WAIT_POLL_MS, deadline - Date.now()));
    try {
      current = await client.messages.get(current.id);
    } catch (error) {
      // The message was accepted: a passing outage is waited out, a refusal (a revoked key) is not.
      if (exitCodeFor(error) !== EXIT.unavailable) throw error;
      out.warn(`${error instanceof Error ? error.message : String(error)}; retrying`);
    }
  }
  return current;
}

function outcomeCode(message: Message): ExitCode {
  if (message.status === 'delivered') return EXIT.ok;
  return FINAL_STATES.includes(message.status) ? EXIT.notDelivered : EXIT.timedOut;
}

export function sendCommand(): Command {
  return customerOptions(
    scheduleFlags(
      new Command('send')
        .description('Send one SMS; it is accepted as pending and delivered in the background, at once or at --at')
        .requiredOption('--to <number>', 'recipient, E.164 (e.g. +447400123456)')
        .requiredOption('--from <sender>', 'an approved sender ID of the account')
        .requiredOption('--body <text>', 'message text, up to 1,600 characters')
        .option('--reference <text>', 'your correlation reference, echoed in events')
        .option('--route-id <id>', 'send through this route only', positiveInteger)
        .option('--smart-encoding', 'replace characters GSM-7 lacks by look-alikes (curly quotes, dashes...) to send as GSM-7')
        .option('--no-smart-encoding', "send the body as given, whatever the account's setting"),
      'the message',
    )
      .option('--idempotency-key <key>', 'retrying with the same key never sends twice (default: a new UUID)')
      .addOption(
        new Option(
          '--dry-run',
          'send nothing: show the encoding, segments, route, cost and send time, or the refusal the send would meet; exits 1 if it would be refused',
        ).conflicts(['idempotencyKey', 'wait']),
      )
      .option(
        '--wait',
        'wait for a final state (delivered, undelivered, failed) and exit with it: 0 delivered, 5 failed or undelivered, 6 none within --timeout',
      )
      .option('--timeout <seconds>', 'with --wait: how long to wait', positiveInteger, DEFAULT_WAIT_SECONDS),
  ).action((options: SendOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      if (!options.wait && command.getOptionValueSource('timeout') === 'cli') throw new UsageError('--timeout applies only with --wait.');
      const client = await sdk();
      const body = { to: options.to, ...messageFields(options) };
      if (options.dryRun) {
        const preview = await client.messages.preview(body);
        out.result(preview, () => showPreview(preview.recipients, preview));
        // The exit the send would have: Dispatch would refuse it.
        return preview.refused > 0 ? EXIT.refused : EXIT.ok;
      }
      const accepted = await client.messages.send(body, { idempotencyKey: options.idempotencyKey });
      if (accepted.send_at && accepted.status === 'pending')
        out.note(`Scheduled for ${accepted.send_at}: dispatch messages cancel ${accepted.id} cancels it until then.`);
      const message = options.wait ? await waitForFinalState(client, accepted, options.timeout, out) : accepted;
      out.result(message, () => showMessage(message));
      if (!options.wait) return EXIT.ok;
      const code = outcomeCode(message);
      if (code === EXIT.timedOut)
        out.warn(`${message.id} is still ${message.status} after ${options.timeout} s: no final state yet (see dispatch messages get ${message.id})`);
      return code;
    }),
  );
}

interface ListOptions extends PageOptions {
  status?: Message['status'];
  to?: string;
  scheduled?: boolean;
  sendAfter?: string;
  sendBefore?: string;
}

export function messagesCommand(): Command {
  const messages = new Command('messages').description('Read sent messages, and cancel scheduled ones');

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
        .addOption(new Option('--status <status>', 'only messages in this status').choices(MESSAGE_STATUSES))
        .option('--to <number>', 'only messages to this number')
        .option('--scheduled', 'only messages waiting for their send time (pending, sent with --at)')
        .option('--send-after <date-time>', 'only messages scheduled to go after this time', timestamp)
        .option('--send-before <date-time>', 'only messages scheduled to go before this time', timestamp),
      'messages',
    ),
  ).action((options: ListOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (
        await sdk()
      ).messages.list({
        ...(options.status !== undefined && { status: options.status }),
        ...(options.to !== undefined && { to: options.to }),
        ...(options.scheduled && { scheduled: true }),
        ...(options.sendAfter !== undefined && { send_after: options.sendAfter }),
        ...(options.sendBefore !== undefined && { send_before: options.sendBefore }),
        ...pageQuery(options),
      });
      out.result(page, () => showPage(page));
    }),
  );

  customerOptions(
    messages
      .command('cancel')
      .description('Cancel a message not yet handed to an upstream (one waiting for its send time): it ends failed (canceled) and is refunded')
      .argument('<message-id>', 'msg_...')
      .addHelpText('after', '\nA message already handed to an upstream cannot be canceled: exits 1 (message_not_cancelable).'),
  ).action((id: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const message = await (await sdk()).messages.cancel(id);
      out.result(message, () => showMessage(message));
    }),
  );

  return messages;
}
