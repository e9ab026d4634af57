import { listKeysForAccount } from '../db/api-keys.ts';
import { createApiKey as createKey, revokeApiKey as revokeKey } from '../domain/api-keys.ts';
import { DEFAULT_SCOPES } from '../domain/scopes.ts';
import { deleted, toApiKey, toApiKeyWithSecret } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listApiKeys: CustomerHandler<'listApiKeys'> = async (_request, { services, caller }) => {
  const rows = await listKeysForAccount(services.db, caller.account.id);
  return {
    status: 200,
    data: { object: 'list', data: rows.map((row) => toApiKey(row, services.keyLastUsed(row.id, row.last_used_at))) },
  };
};

/** The key as it authenticated this request: any valid key may read itself, whatever its scopes. */
export const getCurrentApiKey: CustomerHandler<'getCurrentApiKey'> = (_request, { services, caller }) =>
  Promise.resolve({ status: 200, data: toApiKey(caller.apiKey, services.keyLastUsed(caller.apiKey.id, caller.apiKey.last_used_at)) });

export const createApiKey: CustomerHandler<'createApiKey'> = async ({ body }, { services, caller }) => {
  const { row, plainKey } = await createKey(services.db, caller.account.id, body, DEFAULT_SCOPES, caller.apiKey);
  return { status: 201, data: toApiKeyWithSecret(row, plainKey) };
};

export const revokeApiKey: CustomerHandler<'revokeApiKey'> = async ({ params }, { services, caller }) => {
  await revokeKey(services.db, caller.account.id, params.id, caller.apiKey);
  return { status: 200, data: deleted(params.id, 'api_key') };
};
