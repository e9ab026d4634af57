// dispatch senders create|list (customer API, through the SDK) and approve|reject|suspend (admin API).
import { Command, Option } from 'commander';
import type { Sender, SenderAction } from '../admin-client.ts';
import { adminOptions, customerOptions, positiveInteger, run } from '../context.ts';
import { fields, table } from '../output.ts';

export const showSender = (sender: Sender) =>
  fields([
    ['ID', sender.id],
    ['Sender ID', sender.sender_id],
    ['Type', sender.type],
    ['Country', sender.country_code],
    ['Status', sender.status],
    ['Approved', sender.approved_at],
    ['Created', sender.created_at],
  ]);

const ACTIONS: [SenderAction, string][] = [
  ['approve', 'Approve a pending (or suspended) sender: it may then be used as `from`'],
  ['reject', 'Reject a pending sender'],
  ['suspend', 'Suspend an approved sender: sends from it are refused from now on'],
];

const STATUSES = ['pending', 'approved', 'rejected', 'suspended'] as const;
const TYPES = ['alphanumeric', 'numeric', 'short_code', 'long_code'] as const;

export function sendersCommand(): Command {
  const senders = new Command('senders').description("Request sender IDs (API key) and review them (admin)");

  customerOptions(
    senders
      .command('create')
      .description('Request a sender ID for your account; it is pending until the operator approves it')
      .argument('<sender-id>', 'alphanumeric (up to 11 characters), short code or E.164 number')
      .addOption(new Option('--type <type>', 'sender type (default: inferred from the sender ID)').choices(TYPES))
      .option('--country <code>', 'ISO 3166 country the sender is registered in, 2 letters'),
  ).action((senderId: string, options: { type?: Sender['type']; country?: string }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const sender = await (await sdk()).senders.create({
        sender_id: senderId,
        ...(options.type !== undefined && { type: options.type }),
        ...(options.country !== undefined && { country_code: options.country }),
      });
      out.result(sender, () => showSender(sender));
    }),
  );

  customerOptions(
    senders
      .command('list')
      .description("List your account's sender IDs, newest first (--json prints {data, pagination})")
      .addOption(new Option('--status <status>', 'only senders in this status').choices(STATUSES))
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'senders per page, 1 to 100 (default 50)', positiveInteger),
  ).action((options: { status?: Sender['status']; page?: number; limit?: number }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (await sdk()).senders.list({
        ...(options.status !== undefined && { status: options.status }),
        ...(options.page !== undefined && { page: options.page }),
        ...(options.limit !== undefined && { limit: options.limit }),
      });
      out.result(page, () =>
        page.data.length === 0
          ? 'No senders.'
          : `${table(['ID', 'Sender ID', 'Type', 'Status', 'Approved', 'Created'], page.data.map((sender) => [sender.id, sender.sender_id, sender.type, sender.status, sender.approved_at, sender.created_at]))}\nPage ${page.pagination.page} of ${page.pagination.pages} (${page.pagination.total} in all)`,
      );
    }),
  );
  for (const [action, description] of ACTIONS) {
    adminOptions(senders.command(action).description(description).argument('<sender-id>', 'snd_...')).action(
      (id: string, _options: object, command: Command) =>
        run(command, async ({ admin, out }) => {
          const sender = await (await admin()).sender(id, action);
          out.result(sender, () => showSender(sender));
        }),
    );
  }
  return senders;
}
