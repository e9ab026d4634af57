// One HTTP POST of a webhook delivery: the network half of an attempt, with everything that
// can go wrong turned into a result rather than an exception.
//
// node:http rather than fetch, because fetch takes no `lookup`, and that is the SSRF guard that
// matters: it judges the addresses actually connected to (after DNS, at delivery time), which
// the creation-time check cannot do. Both apply the one rule of domain/ssrf-guard.ts.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { AddressNotAllowedError, isPublicAddress, publicOnlyLookup } from '../domain/ssrf-guard.ts';

export interface WebhookPostResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** Why an attempt ended as it did, for metrics: a closed set, unlike the error text. */
export const WEBHOOK_ATTEMPT_REASONS = ['ok', 'http_status', 'redirect', 'timeout', 'address_not_allowed', 'tls', 'connection', 'invalid_request'] as const;
export type WebhookAttemptReason = (typeof WEBHOOK_ATTEMPT_REASONS)[number];

/** The reason of a result, read from the error texts postWebhook writes below. */
export function attemptReason(result: WebhookPostResult): WebhookAttemptReason {
  const error = result.error ?? '';
  if (result.ok) return 'ok';
  if (error.startsWith('no answer within')) return 'timeout';
  if (error.startsWith('redirect')) return 'redirect';
  if (error.startsWith('HTTP ')) return 'http_status';
  if (error.startsWith('address not allowed')) return 'address_not_allowed';
  if (error.startsWith('TLS error')) return 'tls';
  if (/^(invalid URL|unsupported URL scheme|invalid request)/.test(error)) return 'invalid_request';
  return 'connection';
}

export interface WebhookPostOptions {
  /** Deadline for the whole exchange: connect, send, response headers and (capped) body. */
  timeoutMs: number;
  /** Allow loopback, private and link-local addresses (WEBHOOK_ALLOW_PRIVATE_URLS). */
  allowPrivate: boolean;
}

const guardedLookup = publicOnlyLookup();

/** The response body is read only to let the exchange finish; past this much we stop. */
const RESPONSE_BODY_CAP = 64 * 1024;

const TLS_ERROR_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH$)/;

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code) return code;
  // With happy eyeballs (autoSelectFamily), failing to reach every address of a host gives an
  // AggregateError of the per-address errors.
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

/** OpenSSL's messages carry a hex error id and a source path; keep the reason. */
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:\n]+)/.exec(message)?.[1] ?? message;
}

function describeNetworkError(error: unknown, host: string): string {
  const message = (error instanceof Error ? error.message : String(error)).trim().replace(/\s+/g, ' ');
  if (error instanceof AddressNotAllowedError) return `address not allowed: ${message}`;
  const code = errorCode(error);
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
      return `host ${host} does not resolve`;
    case 'EAI_AGAIN':
      return `DNS lookup of ${host} failed (temporary)`;
    case 'ECONNRESET':
      return 'connection reset';
    case 'EPIPE':
      return 'connection closed while sending';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ENETUNREACH':
      return 'network unreachable';
    case 'HPE_INVALID_CONSTANT':
    case 'HPE_INVALID_STATUS':
    case 'HPE_INVALID_HEADER_TOKEN':
    case 'HPE_HEADER_OVERFLOW':
      return `invalid HTTP response: ${message}`;
  }
  if (code !== undefined && TLS_ERROR_CODE.test(code)) return `TLS error: ${tlsReason(message)}`;
  return message || code || 'request failed';
}

function withContentLength(headers: Record<string, string>, length: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'content-length') out[name] = value;
  }
  out['Content-Length'] = String(length);
  return out;
}

/**
 * POSTs rawBody, exactly as given, to url. Success is a 2xx answer whose body (up to 64 KiB)
 * arrives within timeoutMs. Redirects are not followed: the receiver must give the URL it
 * answers on, and following one would bypass the creation-time check. Never throws.
 */
export async function postWebhook(url: string, rawBody: string, headers: Record<string, string>, options: WebhookPostOptions): Promise<WebhookPostResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const failure = (error: string): WebhookPostResult => ({ ok: false, statusCode: null, error, durationMs: elapsed() });

  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return failure('invalid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    return failure(`unsupported URL scheme ${target.protocol}`);
  }

  const host = target.hostname;
  // An IP-literal host is connected to without a lookup, so it is judged here.
  const literal = host.replace(/^\[(.*)\]$/, '$1');
  if (!options.allowPrivate && isIP(literal) !== 0 && !isPublicAddress(literal)) {
    return failure(`address not allowed: ${literal} is not a public address`);
  }
  const body = Buffer.from(rawBody, 'utf8');

  return new Promise<WebhookPostResult>((resolve) => {
    let settled = false;
    let statusSeen: number | null = null;
    let request: http.ClientRequest | undefined;

    const finish = (ok: boolean, statusCode: number | null, error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request?.destroy();
      resolve({ ok, statusCode, error, durationMs: elapsed() });
    };

    const deadline = setTimeout(() => {
      finish(
        false,
        statusSeen,
        statusSeen === null
          ? `no answer within ${options.timeoutMs} ms`
          : `no answer within ${options.timeoutMs} ms (status ${statusSeen} received, body unfinished)`,
      );
    }, options.timeoutMs);

    try {
      const send = target.protocol === 'https:' ? https.request : http.request;
      // `agent: false`: a connection of its own, without keep-alive, destroyed at the end, so that
      // no socket is left behind to hold the worker or the process.
      request = send(target, {
        method: 'POST',
        headers: withContentLength(headers, body.length),
        agent: false,
        ...(!options.allowPrivate && { lookup: guardedLookup }),
      });
    } catch (error) {
      // Invalid header names or values throw synchronously.
      finish(false, null, `invalid request: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }

    // Stays attached after settling: destroying the request may still emit an error.
    request.on('error', (error) => finish(false, statusSeen, describeNetworkError(error, host)));

    request.on('response', (response) => {
      response.on('error', (error) => {
        finish(false, statusSeen, `response interrupted: ${describeNetworkError(error, host)}`);
      });
      const status = response.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        finish(false, status, `redirect (${status}) not followed`);
        return;
      }
      if (status < 200 || status >= 300) {
        finish(false, status, `HTTP ${status}`);
        return;
      }
      statusSeen = status;
      let received = 0;
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received >= RESPONSE_BODY_CAP) finish(true, status, null);
      });
      response.on('end', () => finish(true, status, null));
      response.on('close', () => {
        if (!response.complete) finish(false, status, 'response interrupted: connection closed before the body ended');
      });
    });

    request.end(body);
  });
}
