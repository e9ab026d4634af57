/**
 * An inbound message an HTTP provider posted to the route's inbound URL:
 * `{ id, from, to, body, timestamp? }`. Pure.
 */
import { GSM7_BASIC, GSM7_EXTENSION } from './gsm7-bytes.ts';
import { parseTimestamp } from './http.ts';
import { inboundAddress } from './inbound-address.ts';
import type { InboundDelivery } from './types.ts';

export type HttpInboundReading = { ok: true; delivery: InboundDelivery } | { ok: false; param: string; message: string };

const MAX_ID_LENGTH = 200;
const MAX_ADDRESS_LENGTH = 32;
/** A concatenated SMS has at most 255 parts of at most 160 characters. */
const MAX_BODY_LENGTH = 255 * 160;
const GSM7 = new Set([...GSM7_BASIC, ...GSM7_EXTENSION.keys()]);

/**
 * The delivery the post stands for, or the field that is wrong. A `timestamp` (ISO 8601 with a
 * zone, or unix seconds) that cannot be read is left out, as in delivery reports, rather than
 * losing the message: it is then received now.
 */
export function parseHttpInbound(body: unknown): HttpInboundReading {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { ok: false, param: 'body', message: 'The request body must be a JSON object.' };
  const fields = body as Record<string, unknown>;
  const { id, from, to, body: text } = fields;
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH)
    return { ok: false, param: 'id', message: `id must be a string of 1 to ${MAX_ID_LENGTH} characters.` };
  for (const [name, value] of [
    ['from', from],
    ['to', to],
  ] as const) {
    if (typeof value !== 'string' || !/^\+?[A-Za-z0-9 ]{1,32}$/.test(value) || value.trim() === '') {
      return { ok: false, param: name, message: `${name} must be a phone number, a short code or a sender name of up to ${MAX_ADDRESS_LENGTH} characters.` };
    }
  }
  if (typeof text !== 'string' || text.length > MAX_BODY_LENGTH)
    return { ok: false, param: 'body', message: `body must be a string of at most ${MAX_BODY_LENGTH} characters.` };
  const receivedAt = parseTimestamp(fields.timestamp);
  return {
    ok: true,
    delivery: {
      providerMessageId: id,
      from: inboundAddress(from as string),
      to: inboundAddress(to as string),
      body: text,
      encoding: [...text].every((ch) => GSM7.has(ch)) ? 'GSM-7' : 'UCS-2',
      ...(receivedAt && { receivedAt }),
    },
  };
}
