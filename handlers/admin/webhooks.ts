import { enableEndpoint, findEndpoint, listAttempts } from '../../db/webhooks.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { notFound } from '../../domain/errors.ts';
import { resendEvent } from '../../domain/webhooks.ts';
import { toPagination, toWebhookAttempt, toWebhookEndpoint, toWebhookResend } from '../representations.ts';
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

export const adminResendWebhookEvent: AdminHandler<'adminResendWebhookEvent'> = async ({ params }, { services, caller }) => {
  const resend = await auditedWrite(services.db, caller.operator, async (trx) => {
    const result = toWebhookResend(await resendEvent(trx, services.jobs, undefined, params.id, params.event_id));
    // Nothing that was there changed: the write is the delivery it queued, shown as the answer.
    return { result, entry: { action: 'event.resend', target_type: 'event', target_id: result.event_id, before: null, after: result } };
  });
  return { status: 202, data: resend };
};
