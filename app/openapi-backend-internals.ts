import type { OpenAPIBackend, OpenAPIRouter, Operation, ParsedRequest, Request as BackendRequest } from 'openapi-backend';

/*
 * Everything of Dispatch's that replaces part of openapi-backend, in one place. Checked against
 * openapi-backend 5.21.2; test/app/openapi-backend-internals.test.ts fails when an upgrade changes
 * what this relies on: that the router's getOperations and parseRequest are methods a caller may
 * replace, and that this parse answers what the library's does for every operation. The library
 * has no option to cache either, and both run several times for every request.
 */

type Parse = (req: BackendRequest, operation?: Operation) => ParsedRequest;

/**
 * Routing without its repeated work: the operations are flattened once (openapi-backend flattens
 * the whole document again on every call, and routing calls it twice per request; the document
 * does not change once loaded), and requests are parsed by fastRequestParse.
 */
export function fastRouting(api: OpenAPIBackend): void {
  const operations = api.router.getOperations();
  api.router.getOperations = () => operations;
  api.router.parseRequest = fastRequestParse(api.router);
}

/**
 * openapi-backend parses a request three times for its operation (before the security handlers,
 * inside validation, and after coercion), and each parse compiles the operation's path template
 * into regular expressions again and deep-copies headers and query with lodash: a tenth of the
 * CPU of an authenticated read. This parse gives the same answer for
 * the operations Dispatch declares, with each template compiled once. An operation whose query
 * takes JSON or non-exploded arrays, or that reads cookies, keeps the library's parse, which
 * handles them.
 */
export function fastRequestParse(router: OpenAPIRouter): Parse {
  const libraryParse: Parse = router.parseRequest.bind(router);
  const pathParams = new Map<string, ((path: string) => Record<string, string>) | undefined>();
  const parserOf = (operation: Operation) => {
    if (!pathParams.has(operation.path)) pathParams.set(operation.path, needsLibrary(operation) ? undefined : pathParamsOf(operation.path));
    return pathParams.get(operation.path);
  };
  return (req, operation) => {
    // Before routing nothing reads the parse (no pre-routing handler is registered).
    if (!operation) return { ...req, params: {}, query: {}, cookies: {}, headers: {}, requestBody: undefined };
    const params = parserOf(operation);
    if (!params || typeof req.query !== 'object') return libraryParse(req, operation);
    const normalized = router.normalizeRequest(req);
    return {
      ...normalized,
      params: params(router.normalizePath(normalized.path)),
      headers: lowerCaseKeys(req.headers),
      query: copyQuery(req.query),
      cookies: {},
      requestBody: bodyOf(req.body),
    };
  };
}

function needsLibrary(operation: Operation): boolean {
  return (operation.parameters ?? []).some(
    (parameter) =>
      !('$ref' in parameter) && (parameter.in === 'cookie' || (parameter.in === 'query' && (parameter.content !== undefined || parameter.explode === false))),
  );
}

const TEMPLATE_PARAMETER = /\{([A-Za-z0-9_-]+)\}/g;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The path's parameters by name, decoded, as the library's `bath` finds them; none when it does not match. */
function pathParamsOf(template: string): (path: string) => Record<string, string> {
  const names = [...template.matchAll(TEMPLATE_PARAMETER)].map((match) => match[1]);
  const pattern = new RegExp(
    `^${template
      .split(TEMPLATE_PARAMETER)
      .map((part, i) => (i % 2 === 0 ? escapeRegExp(part) : '([^\\/]*)'))
      .join('')}$`,
  );
  return (path) => {
    const match = pattern.exec(path);
    const params: Record<string, string> = {};
    if (match) names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1])));
    return params;
  };
}

function lowerCaseKeys(headers: BackendRequest['headers']): Record<string, string | string[]> {
  const lowered: Record<string, string | string[]> = {};
  for (const name in headers) lowered[name.toLowerCase()] = headers[name];
  return lowered;
}

/**
 * Validation coerces the query it is given in place, so it gets its own: Express's query parser
 * yields strings and arrays of strings, and coercion only numbers and booleans, so one level of
 * copying is a deep copy.
 */
function copyQuery(query: Record<string, string | string[]>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const name in query) {
    const value = query[name];
    copy[name] = Array.isArray(value) ? [...value] : value;
  }
  return copy;
}

/** A body Express left as text is parsed as JSON when it is JSON, as the library does; validation reports it otherwise. */
function bodyOf(body: unknown): unknown {
  if (typeof body !== 'string' || !body) return body;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}
