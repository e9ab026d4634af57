import { expect } from 'chai';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import type { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { DEFINITION_PATH } from '../../app/api.ts';
import { ADMIN_TOKEN, harness } from './harness.ts';

/** The contract every answer is checked against, loaded once. */
let contract: Promise<OpenAPIBackend> | undefined;
export function loadContract(): Promise<OpenAPIBackend> {
  contract ??= (async () => {
    const api = new OpenAPIBackend({
      definition: DEFINITION_PATH,
      strict: true,
      quick: false,
      ajvOpts: { allErrors: true },
      customizeAjv: (ajv: Ajv) => {
        addFormats.default(ajv);
        return ajv;
      },
    });
    await api.init();
    return api;
  })();
  return contract;
}

/** Every (operationId, status) a test has seen, for the coverage check. */
export const observed = new Set<string>();

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
  operationId: string | undefined;
}

export interface RequestOptions {
  /** An API key, or 'admin' for the admin token; omitted sends no Authorization header. */
  auth?: string;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  baseUrl?: string;
}

/**
 * The one way tests call Dispatch: the status must be one the document declares for the
 * operation, and the body must validate against that response's schema.
 */
export async function call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth) headers.authorization = `Bearer ${options.auth === 'admin' ? ADMIN_TOKEN : options.auth}`;
  let payload: string | undefined = options.rawBody;
  if (payload === undefined && options.body !== undefined) payload = JSON.stringify(options.body);
  if (payload !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  // Compiled before the first request, not between two: compiling blocks this process (the
  // server's too) for seconds, past Node's 5 s keep-alive, and the next request on the idle
  // connection would meet its close (ECONNRESET).
  await loadContract();
  const response = await fetch(`${options.baseUrl ?? harness.baseUrl}${path}`, { method, headers, body: payload });
  const { body, operationId } = await checkAnswer(method, path, response);
  return { status: response.status, body, headers: response.headers, operationId };
}

/**
 * Checks one answer against the contract: JSON with the request id in the header and the body,
 * a status the operation declares, a body valid for that status. `path` is relative to /api/v1.
 */
async function checkAnswer(method: string, path: string, response: Response): Promise<{ body: any; operationId: string | undefined }> {
  const api = await loadContract();
  const pathOnly = path.split('?')[0];
  // As Dispatch routes (app/api.ts): a path of the document written without parameters, asked
  // with a method it does not have, matches no templated path either.
  const literal = api.definition.paths?.[pathOnly] as Record<string, unknown> | undefined;
  const routable = !literal || literal[method.toLowerCase() === 'head' ? 'get' : method.toLowerCase()] !== undefined;
  const operation = routable ? (api.router.matchOperation({ method, path: pathOnly, headers: {} }) as Operation | undefined) : undefined;
  if (!operation) return { body: await checkUnrouted(`${method} ${path}`, response), operationId: undefined };
  const text = await response.text();
  const body = checkEnvelope(`${method} ${path}`, response, text);
  const declared = Object.keys(operation.responses ?? {});
  expect(declared, `${operation.operationId} answered ${response.status}, which openapi.yaml does not declare: ${text}`).to.include(String(response.status));
  assertValid(api.validator.validateResponse(body, operation, response.status), `${operation.operationId} ${response.status}`, body);
  observed.add(`${operation.operationId} ${response.status}`);
  return { body, operationId: operation.operationId };
}

/** JSON, with the request id in the header and the body. */
function checkEnvelope(what: string, response: Response, text: string): any {
  expect(response.headers.get('content-type') ?? '', `${what}: content type`).to.match(/^application\/json/);
  const body = JSON.parse(text);
  expect(response.headers.get('x-request-id'), `${what}: X-Request-Id`).to.equal(body.meta?.request_id);
  return body;
}

/**
 * An answer no operation gives (an unknown path, or a path the process does not serve, such as
 * the API on a worker): 404 or 405 in the error envelope of openapi.yaml. Answers its body.
 */
export async function checkUnrouted(what: string, response: Response): Promise<any> {
  const api = await loadContract();
  const body = checkEnvelope(what, response, await response.text());
  expect([404, 405], `${what} matches no operation`).to.include(response.status);
  assertValid(api.validator.validateResponse(body, errorOperation(api), 400), what, body);
  return body;
}

/**
 * A body in the error envelope of openapi.yaml, for answers of URLs the document does not describe
 * (the provider callbacks), checked against the schema every error answer has.
 */
export async function checkErrorBody(what: string, body: unknown): Promise<void> {
  const api = await loadContract();
  assertValid(api.validator.validateResponse(body, errorOperation(api), 400), what, body);
}

/** A fetch for clients under test (the SDK): every answer from Dispatch is checked like call()'s. */
export const contractCheckingFetch: typeof fetch = async (input, init) => {
  await loadContract();
  const request = new Request(input, init);
  const response = await fetch(request);
  await checkAnswer(request.method, new URL(request.url).pathname.replace(/^\/api\/v1/, '') + new URL(request.url).search, response.clone());
  return response;
};

/** Any operation with a 400 answer lends its error schema to answers that match no operation. */
function errorOperation(api: OpenAPIBackend): Operation {
  return api.getOperations().find((op) => op.responses?.['400']) as Operation;
}

function assertValid(result: { valid: boolean; errors?: unknown }, what: string, body: unknown): void {
  if (!result.valid) {
    throw new Error(`${what}: the answer does not match openapi.yaml: ${JSON.stringify(result.errors)}\n${JSON.stringify(body, null, 2)}`);
  }
}

/** Asserts the error envelope's status, type, code and (when given) param. */
export function expectError(response: ApiResponse, status: number, code: string, param?: string): void {
  expect(response.status, JSON.stringify(response.body)).to.equal(status);
  expect(response.body.success).to.equal(false);
  expect(response.body.error.code).to.equal(code);
  if (param !== undefined) expect(response.body.error.param).to.equal(param);
}
