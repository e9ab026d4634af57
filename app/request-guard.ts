import type { NextFunction, Request, Response } from 'express';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import { invalidRequest, type ApiError } from '../domain/errors.ts';

const NUL = '\u0000';

/** Text PostgreSQL can store: no NUL character, and no unpaired UTF-16 surrogate (which no UTF-8 or jsonb can hold). */
const storable = (text: string) => !text.includes(NUL) && text.isWellFormed();

/** The spec's `param` of a body value: `recipients[3]`, `config.url`. */
const joinParam = (parent: string, key: string | number) => (typeof key === 'number' ? `${parent}[${key}]` : parent ? `${parent}.${key}` : key);

/** Deeper bodies are refused outright: no request of the document nests beyond a few levels, and walking them costs stack. */
export const MAX_BODY_DEPTH = 32;

/**
 * The first place in a parsed JSON body holding text that cannot be stored, in a key or a
 * string value, walked without recursion; `tooDeep` when the body nests beyond MAX_BODY_DEPTH.
 */
function unstorableInBody(body: unknown): { param: string } | { tooDeep: true } | undefined {
  const pending: { value: unknown; param: string; depth: number }[] = [{ value: body, param: '', depth: 0 }];
  while (pending.length > 0) {
    const { value, param, depth } = pending.pop() as (typeof pending)[number];
    if (typeof value === 'string') {
      if (!storable(value)) return { param };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_BODY_DEPTH) return { tooDeep: true };
    const entries: [string | number, unknown][] = Array.isArray(value) ? [...value.entries()] : Object.entries(value);
    for (const [key, item] of entries.reverse()) {
      if (typeof key === 'string' && !storable(key)) return { param: joinParam(param, key) };
      pending.push({ value: item, param: joinParam(param, key), depth: depth + 1 });
    }
  }
  return undefined;
}

/** The path parameter's name at a segment of the request path, read from the operation the path matches. */
function pathParamAt(api: OpenAPIBackend, method: string, segments: string[], index: number): string | undefined {
  const probe = segments.map((segment, i) => (i === index ? '0' : segment)).join('/');
  const operation = api.router.matchOperation({ method, path: probe, headers: {} });
  const template = operation?.path.split('/')[index];
  return template?.match(/^\{(.+)\}$/)?.[1];
}

const UNSTORABLE = 'the NUL character (U+0000) or an unpaired surrogate';
const notStorable = (param: string) => invalidRequest(param, `${param} must not contain ${UNSTORABLE}.`);

/**
 * Text that no field may hold is refused before routing and authentication, like a body that
 * is not JSON: a malformed percent-escape in the path (`/senders/%FF`), and text PostgreSQL
 * cannot store anywhere (NUL, unpaired surrogates). Each names the parameter at fault.
 */
export function refuseUnholdableText(api: OpenAPIBackend) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    next(unholdableText(api, req));
  };
}

function unholdableText(api: OpenAPIBackend, req: Request): ApiError | undefined {
  const method = req.method === 'HEAD' ? 'get' : req.method.toLowerCase();
  const segments = req.path.split('/');
  for (const [index, segment] of segments.entries()) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      const param = pathParamAt(api, method, segments, index);
      return invalidRequest(param, `${param ?? 'The path'} is not valid UTF-8 text: its percent-escapes (${segment}) do not decode.`);
    }
    if (!storable(decoded)) {
      const param = pathParamAt(api, method, segments, index);
      return param ? notStorable(param) : invalidRequest(undefined, `The path must not contain ${UNSTORABLE}.`);
    }
  }
  for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
    if (!storable(name) || [value].flat().some((item) => typeof item === 'string' && !storable(item))) return notStorable(name);
  }
  return unholdableBody(req.body);
}

function unholdableBody(body: unknown): ApiError | undefined {
  const inBody = unstorableInBody(body);
  if (inBody === undefined) return undefined;
  if ('tooDeep' in inBody) return invalidRequest(undefined, `The request body is nested more than ${MAX_BODY_DEPTH} levels deep.`, 'invalid_request');
  return inBody.param ? notStorable(inBody.param) : invalidRequest(undefined, `The request body must not contain ${UNSTORABLE}.`);
}

/**
 * The same refusal for the provider callbacks, whose bodies are not described by openapi.yaml:
 * their paths carry only a route's token, which a lookup answers 404 when it holds such text.
 */
export function refuseUnholdableBody(req: Request, _res: Response, next: NextFunction): void {
  next(unholdableBody(req.body));
}

const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

interface ParameterObject {
  name: string;
  in: string;
  schema?: { type?: string };
}

/**
 * Integer path and query parameters written as anything but plain decimal digits (`1e3`,
 * `0x10`, `2.0`, ` 7`). The validator coerces such text to a number, but the handler and the
 * database read the text as written, so it is refused here, after validation, with the same
 * answer a validation failure gets.
 */
export function nonCanonicalInteger(operation: Operation, params: Record<string, unknown>, query: Record<string, unknown>): ApiError | undefined {
  for (const parameter of (operation.parameters ?? []) as ParameterObject[]) {
    if (parameter.schema?.type !== 'integer' || (parameter.in !== 'path' && parameter.in !== 'query')) continue;
    const raw = (parameter.in === 'path' ? params : query)[parameter.name];
    const values = [raw].flat().filter((value) => value !== undefined);
    if (values.some((value) => typeof value !== 'string' || !CANONICAL_INTEGER.test(value))) {
      return invalidRequest(parameter.name, `${parameter.name} must be an integer written in decimal digits, such as 2.`);
    }
  }
  return undefined;
}
