import { listKeysForAccount } from '../../db/api-keys.ts';
import { listLedger } from '../../db/ledger.ts';
import { assignedRoutes } from '../../db/routes.ts';
import { getAccount } from '../../domain/accounts.ts';
import { toAccountRoute, toApiKey, toBalanceTransaction, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

// What one account holds, as its operator reads it: each answers 404 for an unknown account.

export const adminListAccountRoutes: AdminHandler<'adminListAccountRoutes'> = async ({ params }, { services }) => {
  const account = await getAccount(services.db, params.id);
  const routes = await assignedRoutes(services.db, account.id);
  return { status: 200, data: { object: 'list', data: routes.map((route) => toAccountRoute(route, services.inboundUrl)) } };
};

export const adminListAccountApiKeys: AdminHandler<'adminListAccountApiKeys'> = async ({ params }, { services }) => {
  const account = await getAccount(services.db, params.id);
  const rows = await listKeysForAccount(services.db, account.id);
  return { status: 200, data: { object: 'list', data: rows.map((row) => toApiKey(row, services.keyLastUsed(row.id, row.last_used_at))) } };
};

export const adminListAccountLedger: AdminHandler<'adminListAccountLedger'> = async ({ params, query }, { services }) => {
  const account = await getAccount(services.db, params.id);
  const { page, limit } = query;
  const { rows, total } = await listLedger(services.db, account.id, {}, { page, limit });
  return { status: 200, data: rows.map((row) => toBalanceTransaction(row, account.currency)), pagination: toPagination(page, limit, total) };
};
