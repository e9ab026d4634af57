// Verification of webhook deliveries on the receiving side. The signature scheme
// (webhook-signature.ts) is also the one the service signs with, so the two cannot drift apart.
import type { components } from './generated/openapi.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifySignature,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from './webhook-signature.ts';

export { DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER, WebhookVerificationError };
export type { WebhookVerificationErrorCode };

type Schemas = components['schemas'];
/** `message.sent`, `message.delivered`, `message.failed`: `data` is the message. */
export type MessageStatusEvent = Schemas['Event'];
/** `message.received`: `data` is the inbound message. */
export type InboundMessageEvent = Schemas['InboundMessageEvent'];
/** `recipient.opted_out`, `recipient.opted_in`: `data` is the opt-out. */
export type OptOutEvent = Schemas['OptOutEvent'];
/** `balance.low`: `data` is the balance that fell below the account's threshold. */
export type LowBalanceEvent = Schemas['LowBalanceEvent'];
/** One member per type (the schemas group several types), so that a check of `type` narrows `data`. */
type OnePerType<E extends { type: string }> = E extends unknown ? { [T in E['type']]: Omit<E, 'type'> & { type: T } }[E['type']] : never;
/** The events this SDK knows, told apart by `type`. */
export type KnownEvent = OnePerType<MessageStatusEvent | InboundMessageEvent | OptOutEvent | LowBalanceEvent>;
export type KnownEventType = KnownEvent['type'];

/**
 * An event of a type added to Dispatch after this SDK was built. Event types are an open set:
 * a receiver answers 2xx to every authentic event and may ignore the types it does not know.
 */
export interface UnknownEvent {
  id: string;
  object: 'event';
  type: string;
  created_at: string;
  data: Record<string, unknown>;
}

/** What a delivery carries: narrow it with isKnownEvent, then switch on `type`. */
export type Event = KnownEvent | UnknownEvent;

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set<KnownEventType>(
  Object.keys({
    'message.sent': true,
    'message.delivered': true,
    'message.failed': true,
    'message.received': true,
    'recipient.opted_out': true,
    'recipient.opted_in': true,
    'balance.low': true,
  } satisfies Record<KnownEventType, true>) as KnownEventType[],
);

/** Whether this SDK knows the event's type (and so the shape of its `data`). */
export function isKnownEvent(event: Event): event is KnownEvent {
  return KNOWN_EVENT_TYPES.has(event.type);
}

export interface VerifyWebhookOptions {
  /** How far the signed timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
}

/**
 * Verifies a delivery's `Dispatch-Signature` header over the raw request body (the exact bytes
 * received, before any JSON parsing) and answers the event, of a known type or not. Throws
 * WebhookVerificationError (`code`: `missing_header`, `malformed_header`, `signature_mismatch`,
 * `timestamp_out_of_tolerance`, or `invalid_payload` when an authentic body is not an event).
 */
export function verifyWebhook(rawBody: string | Buffer, header: string | null | undefined, secret: string, options: VerifyWebhookOptions = {}): Event {
  verifySignature(rawBody, header, secret, { toleranceSeconds: options.toleranceSeconds });
  let event: unknown;
  try {
    event = JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8'));
  } catch {
    throw invalidPayload('the payload is not valid JSON');
  }
  if (!isEvent(event)) throw invalidPayload('the payload is not a Dispatch event');
  return event;
}

/** The envelope every event shares; `data` is checked only for being an object, whatever the type. */
function isEvent(value: unknown): value is Event {
  const event = value as Partial<UnknownEvent> | null;
  return (
    typeof event === 'object' &&
    event !== null &&
    !Array.isArray(event) &&
    event.object === 'event' &&
    typeof event.id === 'string' &&
    typeof event.type === 'string' &&
    typeof event.created_at === 'string' &&
    typeof event.data === 'object' &&
    event.data !== null &&
    !Array.isArray(event.data)
  );
}

function invalidPayload(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}
