import { createApiKey } from '../../domain/api-keys.ts';
import { creditAccount, getAccount, openAccount } from '../../domain/accounts.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { toAccount, toApiKeyWithSecret, toBalance } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminCreateAccount: AdminHandler<'adminCreateAccount'> = async ({ body }, { services }) => ({
  status: 201,
  data: toAccount(await openAccount(services.db, body)),
});

export const adminGetAccount: AdminHandler<'adminGetAccount'> = async ({ params }, { services }) => ({
  status: 200,
  data: toAccount(await getAccount(services.db, params.id)),
});

export const adminCreditAccount: AdminHandler<'adminCreditAccount'> = async ({ params, body }, { services }) => ({
  status: 200,
  data: toBalance(await creditAccount(services.db, params.id, body.amount, body.description)),
});

export const adminCreateApiKey: AdminHandler<'adminCreateApiKey'> = async ({ params, body }, { services }) => {
  const account = await getAccount(services.db, params.id);
  const { row, plainKey } = await createApiKey(services.db, account.id, body, [...SCOPES], null);
  return { status: 201, data: toApiKeyWithSecret(row, plainKey) };
};
