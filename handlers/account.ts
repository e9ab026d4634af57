import { findAccount } from '../db/accounts.ts';
import { listLedger } from '../db/ledger.ts';
import { notFound } from '../domain/errors.ts';
import { changeAccountSettings } from '../domain/accounts.ts';
import { usageFor } from '../domain/usage.ts';
import { toAccount, toBalance, toBalanceTransaction, toPagination, toUsage } from './representations.ts';
import type { CustomerHandler } from './types.ts';

/** The caller's account as it is now (the authenticated row may be a request old). */
async function currentAccount(db: Parameters<typeof findAccount>[0], id: string) {
  const account = await findAccount(db, id);
  if (!account) throw notFound('account', id);
  return account;
}

export const getAccount: CustomerHandler<'getAccount'> = async (_request, { services, caller }) => ({
  status: 200,
  data: toAccount(await currentAccount(services.db, caller.account.id)),
});

export const getBalance: CustomerHandler<'getBalance'> = async (_request, { services, caller }) => ({
  status: 200,
  data: toBalance(await currentAccount(services.db, caller.account.id)),
});

export const getUsage: CustomerHandler<'getUsage'> = async ({ query }, { services, caller }) => {
  const usage = await usageFor(services.db, caller.account, query.period, services.clock());
  return { status: 200, data: toUsage(usage, caller.account.currency) };
};

export const updateAccount: CustomerHandler<'updateAccount'> = async ({ body }, { services, caller }) => ({
  status: 200,
  data: toAccount(await changeAccountSettings(services.db, caller.account.id, body)),
});

export const listBalanceTransactions: CustomerHandler<'listBalanceTransactions'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const filter = { kind: query.type, messageId: query.message_id, createdAfter: query.created_after, createdBefore: query.created_before };
  const { rows, total } = await listLedger(services.db, caller.account.id, filter, { page, limit });
  return { status: 200, data: rows.map((row) => toBalanceTransaction(row, caller.account.currency)), pagination: toPagination(page, limit, total) };
};
