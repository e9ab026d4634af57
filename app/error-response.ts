import type { ErrorObject } from 'ajv';
import { ApiError, internalError, invalidRequest, missingParameter, unknownParameter } from '../domain/errors.ts';

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

const article = (word: string) => (/^[aeiou]/.test(word) ? 'an' : 'a');

function describe(error: ErrorObject, param: string, headerNames: string[]): ApiError {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return missingParameter(paramName(error.instancePath, String(p.missingProperty), headerNames));
    case 'additionalProperties':
      return unknownParameter(paramName(error.instancePath, String(p.additionalProperty)));
    case 'type':
      return invalidRequest(param, `${param} must be ${article(String(p.type))} ${p.type}.`);
    case 'enum':
      return invalidRequest(param, `${param} must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`);
    case 'format':
      return invalidRequest(param, `${param} must be a valid ${p.format}.`);
    case 'minimum':
    case 'exclusiveMinimum':
    case 'maximum':
    case 'exclusiveMaximum':
      return invalidRequest(param, `${param} must be ${String(p.comparison)} ${String(p.limit)}.`);
    case 'minLength':
      return invalidRequest(param, `${param} must be at least ${p.limit} characters long.`);
    case 'maxLength':
      return invalidRequest(param, `${param} must be at most ${p.limit} characters long.`);
    case 'minItems':
      return invalidRequest(param, `${param} must have at least ${p.limit} items.`);
    case 'maxItems':
      return invalidRequest(param, `${param} must have at most ${p.limit} items.`);
    case 'uniqueItems':
      return invalidRequest(param, `${param} must not contain duplicates (items ${p.j} and ${p.i} are equal).`);
    case 'minProperties':
      return invalidRequest(param || undefined, `${param || 'The request body'} must have at least ${p.limit} field(s).`);
    case 'pattern':
      return invalidRequest(param, `${param} does not have the expected format (${p.pattern}).`);
    default:
      return invalidRequest(param || undefined, `${param || 'The request'} is invalid: ${error.message ?? error.keyword}.`);
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

/** Errors raised by Express's JSON body parser, identified by the `type` it sets. */
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
      return undefined;
  }
}

/** Any thrown value as an ApiError; `unexpected` is true when it must be logged as a fault. */
export function toApiError(error: unknown): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  const parsed = typeof error === 'object' && error !== null ? fromBodyParser(error as { type?: string }) : undefined;
  if (parsed) return { apiError: parsed, unexpected: false };
  return { apiError: internalError(), unexpected: true };
}
