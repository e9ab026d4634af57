import type { MessageRow } from '../db/messages.ts';
import type { components } from '../sdk/generated/openapi.ts';
import { toAmount } from './money.ts';

/** A message as callers see it, in API answers and in event payloads alike: the document's Message schema. */
export type MessageView = components['schemas']['Message'];

const isoOrNull = (date: Date | null): string | null => (date === null ? null : new Date(date).toISOString());

export const messageView = (row: MessageRow): MessageView => ({
  id: row.id,
  object: 'message',
  to: row.to,
  from: row.from,
  body: row.body,
  status: row.status,
  cost: toAmount(row.cost),
  currency: row.currency,
  route_id: row.route_id,
  provider_message_id: row.provider_message_id,
  attempts: row.attempts,
  error: row.error,
  reference: row.reference,
  segments: row.segments,
  encoding: row.encoding,
  smart_encoded: row.smart_encoded,
  created_at: new Date(row.created_at).toISOString(),
  sent_at: isoOrNull(row.sent_at),
  delivered_at: isoOrNull(row.delivered_at),
  failed_at: isoOrNull(row.failed_at),
  send_at: isoOrNull(row.send_at),
  validity_period: row.validity_period,
  bulk_id: row.bulk_id,
  send_window: row.send_window,
});
