import type { Knex } from 'knex';
import { lockMessagesOf, submittedOf, type MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { conflict, notFound } from './errors.ts';
import { failPending } from './message-outcomes.ts';

const CANCELED = { type: 'invalid_request_error' as const, code: 'canceled', message: 'Canceled before it was handed to an upstream.' };

const isCanceled = (message: MessageRow) => message.status === 'failed' && message.error?.code === 'canceled';

/**
 * Of messages locked for update, those not yet handed to an upstream: pending, and no submission
 * begun. The submission's begin takes a share lock of the row and requires it pending
 * (db/message-attempts.ts), so the lock held here and the look for submissions after it decide a
 * race with the sending moment: canceled and never begun, or begun and not cancelable.
 */
async function cancelable(trx: Knex.Transaction, locked: MessageRow[]): Promise<MessageRow[]> {
  const pending = locked.filter((message) => message.status === 'pending');
  if (pending.length === 0) return [];
  const submitted = await submittedOf(
    trx,
    pending.map((message) => message.id),
  );
  return pending.filter((message) => !submitted.has(message.id));
}

/**
 * Cancels a message not yet handed to an upstream: failed with `canceled`, refunded, with
 * message.failed. A repeated cancel answers the canceled message again; any other message
 * answers 409 message_not_cancelable.
 */
export async function cancelMessage(db: Knex, jobs: JobQueue, accountId: string, id: string, now = new Date()): Promise<MessageRow> {
  return db.transaction(async (trx) => {
    const [message] = await lockMessagesOf(trx, accountId, { ids: [id] });
    if (!message) throw notFound('message', id);
    if (isCanceled(message)) return message;
    const [open] = await cancelable(trx, [message]);
    if (!open)
      throw conflict(
        `Message '${id}' has been handed to an upstream (status ${message.status}) and can no longer be canceled.`,
        'message_not_cancelable',
        'id',
      );
    return failPending(trx, jobs, open, CANCELED, now);
  });
}

export interface BulkCancel {
  /** The bulk's messages canceled, by this cancel or an earlier one. */
  canceled: number;
  /** Those handed over (or failed at acceptance) before the cancel: they go their way. */
  notCancelable: number;
}

/** Cancels every message of a bulk not yet handed to an upstream; repeated, it answers the same counts. */
export async function cancelBulk(db: Knex, jobs: JobQueue, accountId: string, bulkId: string, now = new Date()): Promise<BulkCancel> {
  return db.transaction(async (trx) => {
    const locked = await lockMessagesOf(trx, accountId, { bulkId });
    if (locked.length === 0) throw notFound('bulk', bulkId, 'bulk_id');
    const open = await cancelable(trx, locked);
    for (const message of open) await failPending(trx, jobs, message, CANCELED, now);
    const canceled = locked.filter(isCanceled).length + open.length;
    return { canceled, notCancelable: locked.length - canceled };
  });
}
