// Signing of webhook deliveries, in the scheme Stripe uses: the header
// `Dispatch-Signature: t=<unix seconds>,v1=<hex HMAC-SHA-256 of "<t>.<raw body>">`.
// The timestamp is inside the signed string so that a captured delivery cannot be
// replayed later with a fresh `t`. Receivers verify over the raw bytes, before parsing.
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Dispatch-Signature';
export const DEFAULT_TOLERANCE_SECONDS = 300;

const SCHEME = 'v1';
const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const DIGITS = /^\d+$/;

export type WebhookVerificationErrorCode =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  /** Authentic, but the body is not an event (sdk/webhooks.ts checks that). */
  | 'invalid_payload';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

function hmac(secret: string, timestampSeconds: number, rawBody: string | Buffer): Buffer {
  // The key is the whole secret string, prefix included, as Stripe's libraries use it:
  // receivers paste the secret as shown and it works.
  const mac = createHmac('sha256', secret);
  mac.update(`${timestampSeconds}.`, 'utf8');
  if (typeof rawBody === 'string') mac.update(rawBody, 'utf8');
  else mac.update(rawBody);
  return mac.digest();
}

/**
 * The header value for a body. Given several secrets (the current one first, then one being
 * rotated out), it carries one v1 signature per secret, as Stripe's does during a roll: a
 * receiver holding either secret verifies the delivery.
 */
export function signPayload(rawBody: string, secrets: string | readonly string[], timestampSeconds: number): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError('timestampSeconds must be a non-negative integer of seconds');
  }
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map(
    (secret) => `${SCHEME}=${hmac(secret, timestampSeconds, rawBody).toString('hex')}`,
  );
  if (signatures.length === 0) throw new TypeError('at least one secret is needed to sign');
  return [`t=${timestampSeconds}`, ...signatures].join(',');
}

interface ParsedHeader {
  timestamp: number;
  signatures: string[];
}

function parseHeader(header: string): ParsedHeader {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (!DIGITS.test(value) || timestamp !== null) {
        throw new WebhookVerificationError('malformed_header', 'the signature header carries an invalid timestamp');
      }
      timestamp = Number(value);
      if (!Number.isSafeInteger(timestamp)) {
        throw new WebhookVerificationError('malformed_header', 'the signature header carries an invalid timestamp');
      }
    } else if (key === SCHEME) {
      signatures.push(value);
    }
    // Other schemes (v0, future ones) are ignored so that they can be added or retired
    // without breaking receivers.
  }
  if (timestamp === null) {
    throw new WebhookVerificationError('malformed_header', 'the signature header has no timestamp (t=)');
  }
  if (signatures.length === 0) {
    throw new WebhookVerificationError('malformed_header', `the signature header has no ${SCHEME} signature`);
  }
  return { timestamp, signatures };
}

export function verifySignature(
  rawBody: string | Buffer,
  header: string | null | undefined,
  secret: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): void {
  if (header === null || header === undefined || header.trim() === '') {
    throw new WebhookVerificationError('missing_header', `the ${SIGNATURE_HEADER} header is missing`);
  }
  const { timestamp, signatures } = parseHeader(header);

  const expected = hmac(secret, timestamp, rawBody);
  let matched = false;
  // Several v1 values appear while a secret is being rotated: any one of them may match.
  // No early exit, so the time taken does not tell which candidate matched.
  for (const candidate of signatures) {
    if (!HEX_SHA256.test(candidate)) continue;
    const given = Buffer.from(candidate, 'hex');
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError('signature_mismatch', 'no signature in the header matches the payload');
  }

  // Checked after the signature, as Stripe does: an out-of-tolerance answer then means an
  // authentic but stale (or clock-skewed) delivery, not a forgery.
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > tolerance) {
    throw new WebhookVerificationError('timestamp_out_of_tolerance', `the signature timestamp is more than ${tolerance} seconds away from the current time`);
  }
}
