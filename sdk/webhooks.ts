// Verification of webhook deliveries on the receiving side. The signature check itself is the
// service's own (domain/webhook-signature.ts), so the SDK and the sender cannot drift apart.
import type { components } from '../handlers/generated/openapi.ts';
import {
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifySignature,
  WebhookVerificationError,
  type WebhookVerificationErrorCode,
} from '../domain/webhook-signature.ts';

export { DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER, WebhookVerificationError };
export type { WebhookVerificationErrorCode };

export type Event = components['schemas']['Event'];

export interface VerifyWebhookOptions {
  /** How far the signed timestamp may be from now, in seconds (default 300). */
  toleranceSeconds?: number;
}

/**
 * Verifies a delivery's `Dispatch-Signature` header over the raw request body (the exact bytes
 * received, before any JSON parsing) and answers the typed event. Throws WebhookVerificationError
 * (`code`: `missing_header`, `malformed_header`, `signature_mismatch`,
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

function isEvent(value: unknown): value is Event {
  const event = value as Partial<Event> | null;
  return (
    typeof event === 'object' && event !== null && !Array.isArray(event) &&
    event.object === 'event' && typeof event.id === 'string' && typeof event.type === 'string' &&
    typeof event.created_at === 'string' && typeof event.data === 'object' && event.data !== null
  );
}

function invalidPayload(message: string): WebhookVerificationError {
  return new WebhookVerificationError('invalid_payload', message);
}
