// Errors the SDK throws. Every answer that is not a success becomes a DispatchError carrying the
// error envelope's `type`, `code`, `message`, `param` and `details`; the subclass follows `type`,
// so `catch (e) { if (e instanceof RateLimitError) ... }` and `switch (e.code)` both work.
import type { components } from './generated/openapi.ts';

export type ErrorEnvelope = components['schemas']['ErrorEnvelope'];
export type ErrorType = components['schemas']['ErrorBody']['type'];

export interface DispatchErrorFields {
  status: number;
  type: ErrorType;
  code: string;
  message: string;
  param?: string;
  details?: Record<string, unknown>;
  requestId: string | null;
  headers?: Headers;
}

export class DispatchError extends Error {
  override name = 'DispatchError';
  /** HTTP status; 0 when no answer arrived (see DispatchConnectionError). */
  readonly status: number;
  /** The envelope's broad class, e.g. `invalid_request_error`. */
  readonly type: ErrorType;
  /** The precise reason to branch on, e.g. `parameter_invalid`, `resource_not_found`. */
  readonly code: string;
  /** The parameter at fault, when one is: `to`, `recipients[3]`, `Idempotency-Key`. */
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** `meta.request_id` (or the `X-Request-Id` header): quote it to the operator. */
  readonly requestId: string | null;
  readonly headers: Headers | undefined;

  constructor(fields: DispatchErrorFields, options?: { cause?: unknown }) {
    super(fields.message, options);
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.details = fields.details;
    this.requestId = fields.requestId;
    this.headers = fields.headers;
  }
}

/** 400, 404, 405, 409, 413, 415, 422: fix the request (`code` and `param` say what). */
export class InvalidRequestError extends DispatchError {
  override name = 'InvalidRequestError';
}
/** 401: no key, or an unknown, revoked or expired key. */
export class AuthenticationError extends DispatchError {
  override name = 'AuthenticationError';
}
/** 403: missing scope (`details.required_scope`), IP not allowed, or account inactive. */
export class PermissionError extends DispatchError {
  override name = 'PermissionError';
}
/** 402 `insufficient_balance`: `details` holds `required`, `available`, `currency`. */
export class BalanceError extends DispatchError {
  override name = 'BalanceError';
}
/** 5xx, or an answer that is not what the contract promises. */
export class ApiError extends DispatchError {
  override name = 'ApiError';
}

/** 429: per-minute rate limit, or the key's daily or monthly message limit. */
export class RateLimitError extends DispatchError {
  override name = 'RateLimitError';
  /** The `Retry-After` header in seconds, or null when absent. */
  readonly retryAfter: number | null;

  constructor(fields: DispatchErrorFields & { retryAfter: number | null }) {
    super(fields);
    this.retryAfter = fields.retryAfter;
  }
}

/** The request got no answer: DNS, refused connection, reset, TLS... `cause` holds the original error. */
export class DispatchConnectionError extends DispatchError {
  override name = 'DispatchConnectionError';

  constructor(cause: unknown) {
    const reason = cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    super({ status: 0, type: 'api_error', code: 'connection_error', message: `could not reach Dispatch: ${reason}`, requestId: null }, { cause });
  }
}

/** Parses `Retry-After` (delay-seconds or HTTP-date) into seconds; null when absent or unreadable. */
export function parseRetryAfter(value: string | null): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  const error = (body as ErrorEnvelope | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.type === 'string' && typeof error.code === 'string';
}

/** The typed error for a non-2xx answer; `body` is the parsed JSON, or text when it was not JSON (e.g. a proxy's 502 page). */
export function errorFromResponse(status: number, headers: Headers, body: unknown): DispatchError {
  const requestId = headers.get('x-request-id');
  if (!isErrorEnvelope(body)) {
    const text = typeof body === 'string' && body.length > 0 ? `: ${body.slice(0, 200)}` : '';
    const fields: DispatchErrorFields = {
      status,
      type: 'api_error',
      code: 'unexpected_response',
      message: `HTTP ${status} without a Dispatch error envelope${text}`,
      requestId,
      headers,
    };
    return status === 429
      ? new RateLimitError({ ...fields, type: 'rate_limit_error', retryAfter: parseRetryAfter(headers.get('retry-after')) })
      : new ApiError(fields);
  }
  const { type, code, message, param, details } = body.error;
  const fields: DispatchErrorFields = { status, type, code, message, param, details, requestId: body.meta?.request_id ?? requestId, headers };
  switch (type) {
    case 'invalid_request_error':
      return new InvalidRequestError(fields);
    case 'authentication_error':
      return new AuthenticationError(fields);
    case 'authorization_error':
      return new PermissionError(fields);
    case 'balance_error':
      return new BalanceError(fields);
    case 'rate_limit_error':
      return new RateLimitError({ ...fields, retryAfter: parseRetryAfter(headers.get('retry-after')) });
    default:
      return status === 429 ? new RateLimitError({ ...fields, retryAfter: parseRetryAfter(headers.get('retry-after')) }) : new ApiError(fields);
  }
}
