// dispatch blocklist add|remove (admin API).
import { Command } from 'commander';
import type { BlocklistEntry } from '../admin-client.ts';
import { adminOptions, run } from '../context.ts';
import { fields } from '../output.ts';

const showEntry = (entry: BlocklistEntry) =>
  fields([
    ['ID', entry.id],
    ['Number', entry.number],
    ['Account', entry.account_id ?? 'every account'],
    ['Reason', entry.reason],
    ['Created', entry.created_at],
  ]);

export function blocklistCommand(): Command {
  const blocklist = new Command('blocklist').description('Block and unblock destination numbers (admin)');

  adminOptions(
    blocklist
      .command('add')
      .description('Block sending to a number, for one account or every account')
      .argument('<number>', 'E.164 number, e.g. +447400123457')
      .option('--account <account-id>', 'block for this account only (default: every account)')
      .option('--reason <text>', 'why, e.g. STOP received'),
  ).action((number: string, options: { account?: string; reason?: string }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const entry = await (
        await admin()
      ).block({
        number,
        ...(options.account !== undefined && { account_id: options.account }),
        ...(options.reason !== undefined && { reason: options.reason }),
      });
      out.result(entry, () => showEntry(entry));
    }),
  );

  adminOptions(
    blocklist
      .command('remove')
      .description("Unblock a number: the account's entry with --account, else the global entry")
      .argument('<number>', 'E.164 number')
      .option('--account <account-id>', 'remove the entry of this account'),
  ).action((number: string, options: { account?: string }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const deleted = await (await admin()).unblock(number, options.account);
      out.result(deleted, () => `Unblocked ${number}${options.account ? ` for ${options.account}` : ' for every account'} (${deleted.id}).`);
    }),
  );

  return blocklist;
}
