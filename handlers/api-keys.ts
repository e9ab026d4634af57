import { listKeysForAccount, revokeKey } from '../db/api-keys.ts';
import { createApiKey as createKey } from '../domain/api-keys.ts';
import { notFound } from '../domain/errors.ts';
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

export const createApiKey: CustomerHandler<'createApiKey'> = async ({ body }, { services, caller }) => {
  const { row, plainKey } = await createKey(services.db, caller.account.id, body, DEFAULT_SCOPES, caller.apiKey.permissions);
  return { status: 201, data: toApiKeyWithSecret(row, plainKey) };
};

export const revokeApiKey: CustomerHandler<'revokeApiKey'> = async ({ params }, { services, caller }) => {
  if (!(await revokeKey(services.db, caller.account.id, params.id))) throw notFound('api_key', params.id);
  return { status: 200, data: deleted(params.id, 'api_key') };
};
