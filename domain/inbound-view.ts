import type { InboundMessageRow } from '../db/inbound-messages.ts';

/** An inbound message as callers see it, in API answers and in message.received payloads alike. */
export interface InboundMessageView {
  id: string;
  object: 'inbound_message';
  from: string;
  to: string;
  body: string;
  encoding: InboundMessageRow['encoding'];
  segments: number;
  complete: boolean;
  keyword: string | null;
  route_id: number;
  received_at: string;
}

export const inboundMessageView = (row: InboundMessageRow): InboundMessageView => ({
  id: row.id,
  object: 'inbound_message',
  from: row.from,
  to: row.to,
  body: row.body,
  encoding: row.encoding,
  segments: row.segments,
  complete: row.complete,
  keyword: row.keyword,
  route_id: row.route_id,
  received_at: new Date(row.received_at).toISOString(),
});
