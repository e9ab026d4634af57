import { deleteEndpoint, findEndpoint, listEndpoints } from '../db/webhooks.ts';
import { notFound } from '../domain/errors.ts';
import { createEndpoint } from '../domain/webhooks.ts';
import { deleted, toWebhookEndpoint, toWebhookEndpointWithSecret } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listWebhookEndpoints: CustomerHandler<'listWebhookEndpoints'> = async (_request, { services, caller }) => ({
  status: 200,
  data: { object: 'list', data: (await listEndpoints(services.db, caller.account.id)).map(toWebhookEndpoint) },
});

export const createWebhookEndpoint: CustomerHandler<'createWebhookEndpoint'> = async ({ body }, { services, caller }) => ({
  status: 201,
  data: toWebhookEndpointWithSecret(await createEndpoint(services.db, caller.account.id, body, services.settings.webhookAllowPrivateUrls)),
});

export const getWebhookEndpoint: CustomerHandler<'getWebhookEndpoint'> = async ({ params }, { services, caller }) => {
  const endpoint = await findEndpoint(services.db, params.id, caller.account.id);
  if (!endpoint) throw notFound('webhook_endpoint', params.id);
  return { status: 200, data: toWebhookEndpoint(endpoint) };
};

export const deleteWebhookEndpoint: CustomerHandler<'deleteWebhookEndpoint'> = async ({ params }, { services, caller }) => {
  if (!(await deleteEndpoint(services.db, caller.account.id, params.id))) throw notFound('webhook_endpoint', params.id);
  return { status: 200, data: deleted(params.id, 'webhook_endpoint') };
};
