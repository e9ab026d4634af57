// dispatch accounts create|get|list|credit|suspend|close|reactivate|note (admin API).
import { Command, Option } from 'commander';
import type { Account, AccountStatusAction, AdminPage, Balance } from '../admin-client.ts';
import { adminOptions, number, positiveInteger, run } from '../context.ts';
import { fields, money, pageTable } from '../output.ts';

export const showAccount = (account: Account) =>
  fields([
    ['ID', account.id],
    ['Name', account.name],
    ['Email', account.email],
    ['Company', account.company_name],
    ['Country', account.country],
    ['Status', account.status],
    ['KYC verified', account.kyc_verified],
    ['Balance', money(account.balance, account.currency)],
    ['Created', account.created_at],
  ]);

export const showBalance = (balance: Balance) =>
  fields([
    ['Balance', money(balance.balance, balance.currency)],
    ['As of', balance.as_of],
  ]);

const showAccountPage = (page: AdminPage<Account>) =>
  pageTable(page, ['account', 'accounts'], ['ID', 'Name', 'Email', 'Status', 'Balance', 'Created'], (account) => [
    account.id,
    account.name,
    account.email,
    account.status,
    money(account.balance, account.currency),
    account.created_at,
  ]);

const STATUSES = ['active', 'suspended', 'closed'] as const;

const STATUS_ACTIONS: [AccountStatusAction, string][] = [
  ['suspend', 'Suspend an active account: its keys answer 403 and its pending messages wait until it is reactivated'],
  ['close', 'Close an active or suspended account, for good (it cannot be reactivated)'],
  ['reactivate', 'Reactivate a suspended account: its keys work again and its pending messages go out'],
];

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('Create, list, credit, suspend, close, reactivate and note customer accounts (admin)');

  adminOptions(
    accounts
      .command('create')
      .description('Create an account (status active; no sender, route or key yet)')
      .requiredOption('--email <email>', 'contact email, unique across accounts')
      .requiredOption('--name <name>', 'account name')
      .option('--company-name <name>', 'company name')
      .option('--country <code>', 'ISO 3166 country, 2 letters (e.g. GB)')
      .option('--currency <code>', 'ISO 4217 currency, fixed for the account (default USD)')
      .option('--balance <amount>', 'opening balance (default 0)', number)
      .option('--kyc-verified', 'mark the account as KYC-verified'),
  ).action(
    (
      options: { email: string; name: string; companyName?: string; country?: string; currency?: string; balance?: number; kycVerified?: boolean },
      command: Command,
    ) =>
      run(command, async ({ admin, out }) => {
        const account = await (
          await admin()
        ).createAccount({
          email: options.email,
          name: options.name,
          ...(options.companyName !== undefined && { company_name: options.companyName }),
          ...(options.country !== undefined && { country: options.country }),
          ...(options.currency !== undefined && { currency: options.currency }),
          ...(options.balance !== undefined && { balance: options.balance }),
          ...(options.kycVerified && { kyc_verified: true }),
        });
        out.result(account, () => showAccount(account));
      }),
  );

  adminOptions(accounts.command('get').description('Show an account, whatever its status').argument('<account-id>', 'acct_...')).action(
    (id: string, _options: object, command: Command) =>
      run(command, async ({ admin, out }) => {
        const account = await (await admin()).getAccount(id);
        out.result(account, () => showAccount(account));
      }),
  );

  adminOptions(
    accounts
      .command('list')
      .description('List accounts, newest first (--json prints {data, pagination})')
      .option('--q <text>', 'only accounts whose email or name contains this text, ignoring case')
      .option('--email <email>', 'only the account with this email, ignoring case')
      .addOption(new Option('--status <status>', 'only accounts in this status').choices(STATUSES))
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'accounts per page, 1 to 100 (default 50)', positiveInteger),
  ).action((options: { q?: string; email?: string; status?: Account['status']; page?: number; limit?: number }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const { q, email, status, page: number, limit } = options;
      const page = await (await admin()).listAccounts({ q, email, status, page: number, limit });
      out.result(page, () => showAccountPage(page));
    }),
  );

  adminOptions(
    accounts
      .command('credit')
      .description("Add credit to an account's balance (a ledger entry)")
      .argument('<account-id>', 'acct_...')
      .argument('<amount>', "amount in the account's currency, > 0, at most 4 decimals", number)
      .option('--description <text>', 'ledger description, e.g. an invoice number'),
  ).action((id: string, amount: number, options: { description?: string }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const balance = await (await admin()).credit(id, { amount, ...(options.description !== undefined && { description: options.description }) });
      out.result(balance, () => showBalance(balance));
    }),
  );

  for (const [action, description] of STATUS_ACTIONS) {
    adminOptions(
      accounts.command(action).description(description).argument('<account-id>', 'acct_...').requiredOption('--reason <text>', 'why, kept in the audit log'),
    ).action((id: string, options: { reason: string }, command: Command) =>
      run(command, async ({ admin, out }) => {
        const account = await (await admin()).accountStatus(id, action, options.reason);
        out.result(account, () => showAccount(account));
      }),
    );
  }

  adminOptions(
    accounts
      .command('note')
      .description("Add a note to an account's history in the audit log (support or admin)")
      .argument('<account-id>', 'acct_...')
      .argument('<text>', 'the note, 1 to 2000 characters'),
  ).action((id: string, text: string, _options: object, command: Command) =>
    run(command, async ({ admin, out }) => {
      const entry = await (await admin()).accountNote(id, text);
      out.result(entry, () =>
        fields([
          ['Noted', entry.target_id],
          ['By', entry.operator.name],
          ['Entry', entry.id],
          ['When', entry.created_at],
        ]),
      );
    }),
  );

  return accounts;
}
