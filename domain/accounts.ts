import type { Knex } from 'knex';
import { findAccount, insertAccount, type AccountRow } from '../db/accounts.ts';
import { applyBalanceChange } from '../db/ledger.ts';
import { conflict, invalidRequest, notFound } from './errors.ts';
import { newId } from './ids.ts';
import { hasAtMostFourDecimals, toDecimal } from './money.ts';

export interface AccountRequest {
  email: string;
  name: string;
  company_name?: string | null;
  country?: string | null;
  currency?: string;
  balance?: number;
  kyc_verified?: boolean;
}

function checkAmount(param: string, amount: number): void {
  if (!hasAtMostFourDecimals(amount)) throw invalidRequest(param, `${param} has at most four decimal places.`);
}

/** Opens an account; an opening balance is its first ledger entry, in the same transaction. */
export async function openAccount(db: Knex, request: AccountRequest): Promise<AccountRow> {
  if (request.balance !== undefined) checkAmount('balance', request.balance);
  return db.transaction(async (trx) => {
    const account = await insertAccount(trx, {
      id: newId('acct'),
      email: request.email,
      name: request.name,
      company_name: request.company_name ?? null,
      country: request.country ?? null,
      currency: request.currency ?? 'USD',
      kyc_verified: request.kyc_verified ?? false,
    });
    if (!account) throw conflict(`An account with the email '${request.email}' already exists.`, 'conflict', 'email');
    if (request.balance) {
      const balance = await applyBalanceChange(trx, {
        accountId: account.id,
        kind: 'credit',
        amount: toDecimal(request.balance),
        description: 'Opening balance',
      });
      return { ...account, balance: balance as string };
    }
    return account;
  });
}

export async function creditAccount(db: Knex, accountId: string, amount: number, description?: string | null): Promise<AccountRow> {
  checkAmount('amount', amount);
  return db.transaction(async (trx) => {
    const account = await findAccount(trx, accountId);
    if (!account) throw notFound('account', accountId);
    const balance = await applyBalanceChange(trx, { accountId, kind: 'credit', amount: toDecimal(amount), description: description ?? 'Credit' });
    return { ...account, balance: balance as string };
  });
}

export async function getAccount(db: Knex, id: string): Promise<AccountRow> {
  const account = await findAccount(db, id);
  if (!account) throw notFound('account', id);
  return account;
}
