import type { ErrorObject } from 'ajv';
import { isDatabaseUnavailable } from '../db/availability.ts';
import { ApiError, internalError, invalidRequest, missingParameter, serviceUnavailable, unknownParameter } from '../domain/errors.ts';

/**
 * Turns an Ajv instance path (`/requestBody/recipients/3`) into the spec's `param`
 * (`recipients[3]`). Headers arrive lower-cased; `headerNames` gives their documented spelling.
 */
export function paramName(instancePath: string, child?: string, headerNames: string[] = []): string {
  const [, location, ...segments] = instancePath.split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  if (location === 'header' && segments.length === 1) return headerNames.find((name) => name.toLowerCase() === segments[0]) ?? segments[0];
  return segments.reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name ? `${name}.${segment}` : segment), '');
}

/** What a valid value of a format looks like, for the formats the document uses. */
const FORMAT_EXAMPLES: Record<string, string> = {
  'date-time': 'an RFC 3339 date-time such as 2025-11-21T14:03:27.512Z',
  email: 'an email address such as ops@example.com',
  uri: 'an absolute URL such as https://example.com/webhooks',
};

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

const COMPARISONS: Record<string, string> = { minimum: 'at least', maximum: 'at most', exclusiveMinimum: 'greater than', exclusiveMaximum: 'less than' };

interface DescribedSchema {
  'x-expected'?: string;
  example?: unknown;
  nullable?: boolean;
}

/**
 * What a valid value looks like, for a pattern or format failure: the schema's `x-expected`
 * (written for people, e.g. "an E.164 number such as +447400123456"), else its example. The
 * regular expression itself is never shown.
 */
function expected(schema: DescribedSchema | undefined, format?: string): string | undefined {
  if (schema?.['x-expected']) return schema['x-expected'];
  if (format && FORMAT_EXAMPLES[format]) return FORMAT_EXAMPLES[format];
  if (schema?.example !== undefined) return `in the form of ${JSON.stringify(schema.example)}`;
  return undefined;
}

function describe(error: ErrorObject, param: string, headerNames: string[]): ApiError {
  const p = error.params as Record<string, unknown>;
  const schema = error.parentSchema as DescribedSchema | undefined;
  const subject = param || 'The request body';
  switch (error.keyword) {
    case 'required':
      return missingParameter(paramName(error.instancePath, String(p.missingProperty), headerNames));
    case 'additionalProperties':
      return unknownParameter(paramName(error.instancePath, String(p.additionalProperty)));
    case 'type': {
      const names = String(p.type)
        .split(',')
        .map((type) => TYPE_NAMES[type] ?? type);
      if (schema?.nullable) names.push('null');
      return invalidRequest(param || undefined, `${subject} must be ${names.join(' or ')}.`);
    }
    case 'enum':
      return invalidRequest(param, `${param} must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`);
    case 'format':
    case 'pattern': {
      const hint = expected(schema, error.keyword === 'format' ? String(p.format) : undefined);
      return invalidRequest(param, hint ? `${param} must be ${hint}.` : `${param} is not in the expected format.`);
    }
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return invalidRequest(param, `${param} must be ${COMPARISONS[error.keyword]} ${String(p.limit)}.`);
    case 'minLength':
      return invalidRequest(param, `${param} must be at least ${String(p.limit)} characters long.`);
    case 'maxLength':
      return invalidRequest(param, `${param} must be at most ${String(p.limit)} characters long.`);
    case 'minItems':
      return invalidRequest(param, `${param} must have at least ${String(p.limit)} items.`);
    case 'maxItems':
      return invalidRequest(param, `${param} must have at most ${String(p.limit)} items.`);
    case 'uniqueItems':
      return invalidRequest(param, `${param} must not contain duplicates (items ${String(p.j)} and ${String(p.i)} are equal).`);
    case 'minProperties':
      return invalidRequest(param || undefined, `${subject} must have at least ${String(p.limit)} field(s).`);
    default:
      return invalidRequest(param || undefined, `${param || 'The request'} is invalid.`);
  }
}

/**
 * The first validation failure becomes the answer; every failure is listed in `details.errors`
 * so a caller can fix them all at once.
 */
export function fromValidationErrors(errors: ErrorObject[], headerNames: string[] = []): ApiError {
  const described = errors
    .filter((error) => !(error.keyword === 'required' && error.instancePath === '' && error.params.missingProperty !== 'requestBody'))
    .map((error) => {
      if (error.keyword === 'required' && error.instancePath === '' && error.params.missingProperty === 'requestBody') {
        return invalidRequest(undefined, 'A JSON request body is required.', 'invalid_request');
      }
      return describe(error, paramName(error.instancePath, undefined, headerNames), headerNames);
    });
  const first = described[0] ?? invalidRequest(undefined, 'The request is invalid.', 'invalid_request');
  return new ApiError(first.status, first.type, first.code, first.message, {
    param: first.param,
    details: { errors: described.map((error) => ({ code: error.code, param: error.param, message: error.message })) },
  });
}

/** Errors raised by Express's JSON body parser, identified by the `type` (and `status`) it sets. */
function fromBodyParser(error: { type?: string; status?: number }): ApiError | undefined {
  switch (error.type) {
    case 'entity.parse.failed':
      return new ApiError(400, 'invalid_request_error', 'invalid_json', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new ApiError(413, 'invalid_request_error', 'payload_too_large', 'The request body is larger than 256 KiB.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Send the body as UTF-8 application/json.');
    default:
      // Any other refusal of the body (a size that does not match Content-Length, a body cut short) is the request's fault.
      if (typeof error.type === 'string' && typeof error.status === 'number' && error.status >= 400 && error.status < 500) {
        return invalidRequest(undefined, 'The request body could not be read: it does not match its Content-Length or was cut short.', 'invalid_request');
      }
      return undefined;
  }
}

/** Seconds a caller is asked to wait while the database is unreachable. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** Any thrown value as an ApiError; `unexpected` is true when it must be logged as a fault. */
export function toApiError(error: unknown): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  const parsed = typeof error === 'object' && error !== null ? fromBodyParser(error) : undefined;
  if (parsed) return { apiError: parsed, unexpected: false };
  if (isDatabaseUnavailable(error)) return { apiError: serviceUnavailable(OUTAGE_RETRY_AFTER_SECONDS), unexpected: false };
  return { apiError: internalError(), unexpected: true };
}
