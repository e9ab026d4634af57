import type { Knex } from 'knex';
import { findAccount, insertAccount, lockAccount, setAccountStatus, updateAccountSettings, type AccountRow } from '../db/accounts.ts';
import { applyBalanceChange } from '../db/ledger.ts';
import { conflict, invalidRequest, notFound } from './errors.ts';
import { newId } from './ids.ts';
import { hasAtMostFourDecimals, toDecimal } from './money.ts';
import { parseSendWindow } from './send-window.ts';

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
      return { ...account, balance: balance!.balance };
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
    return { ...account, balance: balance!.balance };
  });
}

/** The settings of PATCH /account; a field not given stays as it is. */
export interface AccountSettingsRequest {
  /** The balance under which the account is warned (balance.low), from the next charge; null: never. */
  low_balance_threshold?: number | null;
  /** Whether the account's sends that do not say replace GSM-7 look-alikes (domain/smart-encoding.ts). */
  smart_encoding?: boolean;
  /** The send window of the account's sends that give none (domain/send-window.ts); null: any hour. */
  send_window?: unknown;
}

/** Changes the account's settings together: all that are given, or none when one is refused. */
export async function changeAccountSettings(db: Knex, accountId: string, request: AccountSettingsRequest): Promise<AccountRow> {
  const { low_balance_threshold: threshold, smart_encoding, send_window: window } = request;
  if (threshold != null) checkAmount('low_balance_threshold', threshold);
  const account = await updateAccountSettings(db, accountId, {
    ...(threshold !== undefined && { low_balance_threshold: threshold === null ? null : toDecimal(threshold) }),
    ...(smart_encoding !== undefined && { smart_encoding }),
    ...(window !== undefined && { send_window: window === null ? null : parseSendWindow(window) }),
  });
  if (!account) throw notFound('account', accountId);
  return account;
}

/** The account, locked for the rest of the transaction: what it is before a change the caller makes and records. */
export async function getAccountForUpdate(trx: Knex.Transaction, id: string): Promise<AccountRow> {
  const account = await lockAccount(trx, id);
  if (!account) throw notFound('account', id);
  return account;
}

export async function getAccount(db: Knex, id: string): Promise<AccountRow> {
  const account = await findAccount(db, id);
  if (!account) throw notFound('account', id);
  return account;
}

export type AccountDecision = 'suspend' | 'close' | 'reactivate';

const STATUS_TRANSITIONS: Record<AccountDecision, { from: AccountRow['status'][]; to: AccountRow['status'] }> = {
  suspend: { from: ['active'], to: 'suspended' },
  close: { from: ['active', 'suspended'], to: 'closed' },
  reactivate: { from: ['suspended'], to: 'active' },
};

/**
 * Moves an account to another status in the caller's transaction, its row locked so that two
 * operators cannot both move it from the same status. Closing is final. Nothing else needs doing
 * here: the database announces the change to every process's key cache (its keys answer 403
 * account_inactive while it is not active), and the send path holds its pending messages back.
 */
export async function changeAccountStatus(
  trx: Knex.Transaction,
  id: string,
  decision: AccountDecision,
  reason: string,
): Promise<{ before: AccountRow; after: AccountRow }> {
  if (reason.trim() === '') throw invalidRequest('reason', 'reason must say why, not be blank.');
  const before = await lockAccount(trx, id);
  if (!before) throw notFound('account', id);
  const { from, to } = STATUS_TRANSITIONS[decision];
  if (!from.includes(before.status)) {
    const why = before.status === 'closed' ? ': closing an account is final' : '';
    throw conflict(`A ${before.status} account cannot be moved to ${to}${why}.`, 'invalid_state_transition');
  }
  const after = (await setAccountStatus(trx, id, to))!;
  return { before, after };
}
