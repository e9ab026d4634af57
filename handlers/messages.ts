import { findMessage, listMessages as listMessageRows } from '../db/messages.ts';
import { invalidRequest, notFound } from '../domain/errors.ts';
import { previewBatch } from '../domain/preview.ts';
import { idempotently, replayHeaders, requestFingerprint } from '../domain/idempotency.ts';
import { cancelBulk as cancelBulkMessages, cancelMessage as cancelOneMessage } from '../domain/cancel.ts';
import { messageStory } from '../domain/message-story.ts';
import { acceptBulk, acceptMessage } from '../domain/sending.ts';
import { toMessage, toMessagePreview, toMessageStory, toPagination } from './representations.ts';
import type { CustomerHandler } from './types.ts';

const idempotencyKey = (headers: Record<string, string | string[] | undefined>): string | undefined => {
  const value = headers['idempotency-key'];
  return Array.isArray(value) ? value[0] : value;
};

/** Without an Idempotency-Key, a send shares its transaction with the sends that arrive beside it (group commit). */
export const sendMessage: CustomerHandler<'sendMessage'> = async ({ body, headers }, { services, caller }) => {
  const key = idempotencyKey(headers);
  if (key === undefined) return { status: 201, data: toMessage(await services.sends.accept(caller, body)) };
  const outcome = await idempotently(services.db, caller.account.id, key, requestFingerprint('sendMessage', body), async (trx) => ({
    status: 201,
    data: toMessage(await acceptMessage(trx, services.jobs, caller, body, { now: services.clock() })),
  }));
  return { status: 201, data: outcome.data, ...(outcome.replayed && { headers: replayHeaders }) };
};

export const sendBulkMessages: CustomerHandler<'sendBulkMessages'> = async ({ body, headers }, { services, caller }) => {
  const outcome = await idempotently(services.db, caller.account.id, idempotencyKey(headers), requestFingerprint('sendBulkMessages', body), async (trx) => {
    const bulk = await acceptBulk(trx, services.jobs, caller, body, services.clock());
    return {
      status: 201,
      data: {
        object: 'bulk_result' as const,
        bulk_id: bulk.bulkId,
        total: bulk.messages.length,
        sent: bulk.accepted,
        failed: bulk.failed,
        messages: bulk.messages.map(toMessage),
      },
    };
  });
  return { status: 201, data: outcome.data, ...(outcome.replayed && { headers: replayHeaders }) };
};

export const getMessage: CustomerHandler<'getMessage'> = async ({ params }, { services, caller }) => {
  const message = await findMessage(services.db, caller.account.id, params.id);
  if (!message) throw notFound('message', params.id);
  return { status: 200, data: toMessage(message) };
};

export const getMessageStory: CustomerHandler<'getMessageStory'> = async ({ params }, { services, caller }) => ({
  status: 200,
  data: toMessageStory(await messageStory(services.db, params.id, caller.account.id)),
});

export const listMessages: CustomerHandler<'listMessages'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const filter = {
    status: query.status,
    to: query.to,
    createdAfter: query.created_after,
    createdBefore: query.created_before,
    scheduled: query.scheduled,
    sendAfter: query.send_after,
    sendBefore: query.send_before,
  };
  const { rows, total } = await listMessageRows(services.db, caller.account.id, filter, { page, limit });
  return { status: 200, data: rows.map(toMessage), pagination: toPagination(page, limit, total) };
};

export const cancelMessage: CustomerHandler<'cancelMessage'> = async ({ params }, { services, caller }) => ({
  status: 200,
  data: toMessage(await cancelOneMessage(services.db, services.jobs, caller.account.id, params.id, services.clock())),
});

export const cancelBulk: CustomerHandler<'cancelBulk'> = async ({ params }, { services, caller }) => {
  const { canceled, notCancelable } = await cancelBulkMessages(services.db, services.jobs, caller.account.id, params.bulk_id, services.clock());
  return { status: 200, data: { object: 'bulk_cancel', bulk_id: params.bulk_id, canceled, not_cancelable: notCancelable } };
};

export const previewMessages: CustomerHandler<'previewMessages'> = async ({ body }, { services, caller }) => {
  const { to, recipients, ...common } = body;
  if ((to === undefined) === (recipients === undefined)) throw invalidRequest('to', 'Give exactly one of to (a send) and recipients (a bulk).');
  const items = (recipients ?? [to!]).map((recipient) => ({ sender: caller, request: { ...common, to: recipient } }));
  const previews = await previewBatch(services.db, items, recipients ? 'while-covered' : 'whole', services.clock());
  return { status: 200, data: toMessagePreview(previews, caller.account.currency) };
};
