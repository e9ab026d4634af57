import { deleteEndpoint, findEndpoint, listAttempts, listEndpoints } from '../db/webhooks.ts';
import { notFound } from '../domain/errors.ts';
import { changeEndpoint, createEndpoint, resendEvent, rotateSigningSecret, sendTestEvent } from '../domain/webhooks.ts';
import {
  deleted,
  toEvent,
  toPagination,
  toRotatedWebhookEndpoint,
  toWebhookAttempt,
  toWebhookEndpoint,
  toWebhookEndpointWithSecret,
  toWebhookResend,
} from './representations.ts';
import type { CustomerHandler, Schemas } from './types.ts';

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

export const updateWebhookEndpoint: CustomerHandler<'updateWebhookEndpoint'> = async ({ params, body }, { services, caller }) => ({
  status: 200,
  data: toWebhookEndpoint(await changeEndpoint(services.db, caller.account.id, params.id, body, services.settings.webhookAllowPrivateUrls)),
});

export const listWebhookAttempts: CustomerHandler<'listWebhookAttempts'> = async ({ params, query }, { services, caller }) => {
  if (!(await findEndpoint(services.db, params.id, caller.account.id))) throw notFound('webhook_endpoint', params.id);
  const { page, limit } = query;
  const { rows, total } = await listAttempts(services.db, params.id, { page, limit }, { eventId: query.event_id, succeeded: query.succeeded });
  return { status: 200, data: rows.map(toWebhookAttempt), pagination: toPagination(page, limit, total) };
};

export const sendWebhookTestEvent: CustomerHandler<'sendWebhookTestEvent'> = async ({ params }, { services, caller }) => ({
  status: 202,
  data: toEvent(await sendTestEvent(services.db, services.jobs, caller.account.id, params.id)) as Schemas['WebhookTestEvent'],
});

export const resendWebhookEvent: CustomerHandler<'resendWebhookEvent'> = async ({ params }, { services, caller }) => ({
  status: 202,
  data: toWebhookResend(await resendEvent(services.db, services.jobs, caller.account.id, params.id, params.event_id)),
});

export const rotateWebhookSecret: CustomerHandler<'rotateWebhookSecret'> = async ({ params, body }, { services, caller }) => {
  // The body is optional, which RequestOf types as absent.
  const request = body as Schemas['RotateWebhookSecretRequest'] | undefined;
  const endpoint = await rotateSigningSecret(services.db, caller.account.id, params.id, request?.expires_in_seconds);
  return { status: 200, data: toRotatedWebhookEndpoint(endpoint) };
};
