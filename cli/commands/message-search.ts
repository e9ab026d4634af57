// dispatch messages search (admin API): any account's messages, found by what a support person
// is told: a number, an account, a status, an error code or the upstream's own message id.
import { Command, Option } from 'commander';
import type { AdminMessage, AdminPage } from '../admin-client.ts';
import { adminOptions, pageFlags, pageQuery, positiveInteger, run, type PageOptions } from '../context.ts';
import { money, pageTable } from '../output.ts';
import { MESSAGE_STATUSES } from './messages.ts';

interface SearchOptions extends PageOptions {
  to?: string;
  account?: string;
  status?: (typeof MESSAGE_STATUSES)[number];
  route?: number;
  errorCode?: string;
  providerId?: string;
}

const showFound = (page: AdminPage<AdminMessage>) =>
  pageTable(page, ['message', 'messages'], ['ID', 'Account', 'To', 'Status', 'Cost', 'Route', 'Provider id', 'Created'], (message) => [
    message.id,
    message.account_id,
    message.to,
    message.status,
    money(message.cost, message.currency),
    message.route_id,
    message.provider_message_id,
    message.created_at,
  ]);

export function messageSearchCommand(): Command {
  return adminOptions(
    pageFlags(
      new Command('search')
        .description("Find any account's messages, newest first (admin; --json prints {data, pagination}); messages story <id> tells one")
        .option('--to <number>', 'only messages to this number (E.164, +447400123456)')
        .option('--account <id>', 'only this account (acct_...)')
        .addOption(new Option('--status <status>', 'only messages in this status').choices(MESSAGE_STATUSES))
        .option('--route <id>', 'only messages this route took, or last tried', positiveInteger)
        .option('--error-code <code>', 'only messages that failed with this code, e.g. provider_unavailable')
        .option('--provider-id <id>', "only the message its upstream knows by this id (the whole message's or one part's)"),
      'messages',
    ),
  ).action((options: SearchOptions, command: Command) =>
    run(command, async ({ admin, out }) => {
      const page = await (
        await admin()
      ).listMessages({
        ...pageQuery(options),
        ...(options.to !== undefined && { to: options.to }),
        ...(options.account !== undefined && { account_id: options.account }),
        ...(options.status !== undefined && { status: options.status }),
        ...(options.route !== undefined && { route_id: options.route }),
        ...(options.errorCode !== undefined && { error_code: options.errorCode }),
        ...(options.providerId !== undefined && { provider_message_id: options.providerId }),
      });
      out.result(page, () => showFound(page));
    }),
  );
}
