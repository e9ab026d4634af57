/** The one error type that every refusal in Dispatch is expressed with; app/ turns it into the spec's error envelope. */
export type ErrorType =
  'invalid_request_error' | 'authentication_error' | 'authorization_error' | 'balance_error' | 'rate_limit_error' | 'provider_error' | 'api_error';

export class ApiError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    type: ErrorType,
    code: string,
    message: string,
    options: { param?: string; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

export const invalidRequest = (param: string | undefined, message: string, code = 'parameter_invalid') =>
  new ApiError(400, 'invalid_request_error', code, message, { param });

export const missingParameter = (param: string) =>
  new ApiError(400, 'invalid_request_error', 'parameter_missing', `Missing required parameter: ${param}.`, { param });

export const unknownParameter = (param: string) =>
  new ApiError(400, 'invalid_request_error', 'parameter_unknown', `Received unknown parameter: ${param}.`, { param });

export const unauthorized = (message: string) => new ApiError(401, 'authentication_error', 'unauthorized', message);

export const forbidden = (message: string, code = 'forbidden', details?: Record<string, unknown>, param?: string) =>
  new ApiError(403, 'authorization_error', code, message, { details, param });

export const notFound = (resource: string, id: string | number, param = 'id') =>
  new ApiError(404, 'invalid_request_error', 'resource_not_found', `No such ${resource}: '${id}'.`, { param });

export const conflict = (message: string, code = 'conflict', param?: string) => new ApiError(409, 'invalid_request_error', code, message, { param });

export const insufficientBalance = (required: string, available: string, currency: string) =>
  new ApiError(402, 'balance_error', 'insufficient_balance', `Your balance of ${available} ${currency} does not cover the cost of ${required} ${currency}.`, {
    details: { required: Number(required), available: Number(available), currency },
  });

export const tooManyRequests = (code: string, message: string, retryAfterSeconds: number, headers: Record<string, string> = {}) =>
  new ApiError(429, 'rate_limit_error', code, message, {
    headers: { ...headers, 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });

export const internalError = () => new ApiError(500, 'api_error', 'internal_error', 'An unexpected error occurred. Quote the request id to the operator.');

/** The database is unreachable: nothing was done, and the same request may be retried after the pause. */
export const serviceUnavailable = (retryAfterSeconds: number) =>
  new ApiError(503, 'api_error', 'service_unavailable', 'Dispatch cannot reach its database just now; nothing was done. Retry shortly.', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });

/** An error as answers show it: the `error` of the error envelope, and a preview's refusal. */
export const errorView = (error: ApiError) => ({
  type: error.type,
  code: error.code,
  message: error.message,
  ...(error.param !== undefined && { param: error.param }),
  ...(error.details !== undefined && { details: error.details }),
});
