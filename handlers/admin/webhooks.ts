import { enableEndpoint, findEndpoint, listAttempts } from '../../db/webhooks.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { notFound } from '../../domain/errors.ts';
import { toPagination, toWebhookAttempt, toWebhookEndpoint } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminEnableWebhookEndpoint: AdminHandler<'adminEnableWebhookEndpoint'> = async ({ params }, { services, caller }) => {
  const endpoint = await auditedWrite(services.db, caller.operator, async (trx) => {
    const before = await findEndpoint(trx, params.id);
    const after = await enableEndpoint(trx, params.id);
    if (!before || !after) throw notFound('webhook_endpoint', params.id);
    return {
      result: after,
      entry: {
        action: 'webhook_endpoint.enable',
        target_type: 'webhook_endpoint',
        target_id: params.id,
        before: toWebhookEndpoint(before),
        after: toWebhookEndpoint(after),
      },
    };
  });
  return { status: 200, data: toWebhookEndpoint(endpoint) };
};

export const adminListWebhookAttempts: AdminHandler<'adminListWebhookAttempts'> = async ({ params, query }, { services }) => {
  if (!(await findEndpoint(services.db, params.id))) throw notFound('webhook_endpoint', params.id);
  const { page, limit } = query;
  const { rows, total } = await listAttempts(services.db, params.id, { page, limit });
  return { status: 200, data: rows.map(toWebhookAttempt), pagination: toPagination(page, limit, total) };
};
