// dispatch accounts create|get|credit (admin API).
import { Command } from 'commander';
import type { Account, Balance } from '../admin-client.ts';
import { adminOptions, number, run } from '../context.ts';
import { fields, money } from '../output.ts';

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

export const showBalance = (balance: Balance) => fields([['Balance', money(balance.balance, balance.currency)], ['As of', balance.as_of]]);

export function accountsCommand(): Command {
  const accounts = new Command('accounts').description('Create, read and credit customer accounts (admin)');

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
  ).action((options: { email: string; name: string; companyName?: string; country?: string; currency?: string; balance?: number; kycVerified?: boolean }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const account = await (await admin()).createAccount({
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

  return accounts;
}
