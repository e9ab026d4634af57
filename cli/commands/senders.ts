// dispatch senders create|list (customer API, through the SDK), list across accounts and
// approve|reject|suspend (admin API).
import { Command, Option } from 'commander';
import type { AdminClient, AdminPage, AdminSender, Sender, SenderAction } from '../admin-client.ts';
import { adminOptions, customerOptions, positiveInteger, run } from '../context.ts';
import { fields, pageTable, UsageError } from '../output.ts';

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

const showAdminPage = (page: AdminPage<AdminSender>) =>
  pageTable(page, ['sender', 'senders'], ['ID', 'Account', 'Sender ID', 'Type', 'Status', 'Created'], (sender) => [
    sender.id,
    sender.account_id,
    sender.sender_id,
    sender.type,
    sender.status,
    sender.created_at,
  ]);

/** Sender ids look like this; anything else is a sender's text, looked up across accounts. */
const SENDER_ID = /^snd_[0-9A-Za-z]+$/;
// More candidates than this are not worth listing: the operator narrows with --account.
const CANDIDATES_SHOWN = 20;

/**
 * The sender an operator means: a `snd_...` id as given, or the one sender whose text matches
 * (ignoring case, within --account when given). Several matches are a usage error that lists them.
 */
async function resolveSender(admin: AdminClient, given: string, accountId: string | undefined): Promise<string> {
  if (SENDER_ID.test(given)) return given;
  const found = await admin.listSenders({ sender_id: given, limit: CANDIDATES_SHOWN, ...(accountId !== undefined && { account_id: accountId }) });
  if (found.pagination.total === 1) return found.data[0].id;
  if (found.pagination.total === 0) throw new Error(`No sender "${given}"${accountId === undefined ? '' : ` in account ${accountId}`}.`);
  const candidates = found.data.map((sender) => `  ${sender.id}  ${sender.account_id}  ${sender.sender_id}  ${sender.status}`).join('\n');
  const more = found.pagination.total > found.data.length ? `\n  ... ${found.pagination.total - found.data.length} more` : '';
  throw new UsageError(`${found.pagination.total} senders are "${given}"; pass the snd_ id, or --account acct_...:\n${candidates}${more}`);
}
const TYPES = ['alphanumeric', 'numeric', 'short_code', 'long_code'] as const;

export function sendersCommand(): Command {
  const senders = new Command('senders').description('Request sender IDs (API key) and review them (admin)');

  customerOptions(
    senders
      .command('create')
      .description('Request a sender ID for your account; it is pending until the operator approves it')
      .argument('<sender-id>', 'alphanumeric (up to 11 characters), short code or E.164 number')
      .addOption(new Option('--type <type>', 'sender type (default: inferred from the sender ID)').choices(TYPES))
      .option('--country <code>', 'ISO 3166 country the sender is registered in, 2 letters'),
  ).action((senderId: string, options: { type?: Sender['type']; country?: string }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const sender = await (
        await sdk()
      ).senders.create({
        sender_id: senderId,
        ...(options.type !== undefined && { type: options.type }),
        ...(options.country !== undefined && { country_code: options.country }),
      });
      out.result(sender, () => showSender(sender));
    }),
  );

  adminOptions(
    senders
      .command('list')
      .description(
        "List your account's sender IDs, newest first; with --all-accounts, --account or --sender-id, every account's (admin) (--json prints {data, pagination})",
      )
      .addOption(new Option('--status <status>', 'only senders in this status').choices(STATUSES))
      .option('--sender-id <text>', 'only senders with this text, ignoring case (admin: across accounts)')
      .option('--account <account-id>', "only this account's senders (admin)")
      .option('--all-accounts', "every account's senders (admin)")
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'senders per page, 1 to 100 (default 50)', positiveInteger)
      .addOption(new Option('--api-key <key>', 'an API key, ds_live_... [env: DISPATCH_API_KEY]').helpGroup('Connection options:')),
  ).action(
    (options: { status?: Sender['status']; senderId?: string; account?: string; allAccounts?: boolean; page?: number; limit?: number }, command: Command) =>
      run(command, async ({ admin, sdk, out }) => {
        const query = {
          ...(options.status !== undefined && { status: options.status }),
          ...(options.page !== undefined && { page: options.page }),
          ...(options.limit !== undefined && { limit: options.limit }),
        };
        if (options.allAccounts || options.account !== undefined || options.senderId !== undefined) {
          const page = await (
            await admin()
          ).listSenders({
            ...query,
            ...(options.senderId !== undefined && { sender_id: options.senderId }),
            ...(options.account !== undefined && { account_id: options.account }),
          });
          out.result(page, () => showAdminPage(page));
          return;
        }
        const page = await (await sdk()).senders.list(query);
        out.result(page, () =>
          pageTable(page, ['sender', 'senders'], ['ID', 'Sender ID', 'Type', 'Status', 'Approved', 'Created'], (sender) => [
            sender.id,
            sender.sender_id,
            sender.type,
            sender.status,
            sender.approved_at,
            sender.created_at,
          ]),
        );
      }),
  );
  for (const [action, description] of ACTIONS) {
    adminOptions(
      senders
        .command(action)
        .description(description)
        .argument('<sender>', 'snd_..., or the sender ID text (e.g. AcmeShip), found across accounts')
        .option('--account <account-id>', 'with a text: only look in this account'),
    ).action((given: string, options: { account?: string }, command: Command) =>
      run(command, async ({ admin, out }) => {
        const client = await admin();
        const sender = await client.sender(await resolveSender(client, given, options.account), action);
        out.result(sender, () => showSender(sender));
      }),
    );
  }
  return senders;
}
