import { expect } from 'chai';
import { OpenAPIBackend, type Operation } from 'openapi-backend';
import type { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { DEFINITION_PATH } from '../../app/api.ts';
import type { components, paths } from '../../sdk/generated/openapi.ts';
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

/** The schemas of openapi.yaml, as generated. */
export type Schemas = components['schemas'];
/** A page of a list, as the SDK and the CLI give it. */
export interface Page<Item> {
  data: Item[];
  pagination: Schemas['Pagination'];
}

type Segments<P extends string> = P extends `${infer Head}/${infer Tail}` ? [Head, ...Segments<Tail>] : [P];
/** A segment of a requested path matches the document's: a parameter (`{id}`) matches any; the last may carry a query. */
type SegmentMatches<Requested extends string, Declared extends string, Last extends boolean> = Declared extends `{${string}}`
  ? true
  : [Requested] extends [Declared]
    ? true
    : Last extends true
      ? [Requested] extends [`${Declared}${string}`]
        ? true
        : false
      : false;
type SegmentsMatch<Requested extends string[], Declared extends string[]> = Requested extends [infer R extends string, ...infer RestR extends string[]]
  ? Declared extends [infer D extends string, ...infer RestD extends string[]]
    ? SegmentMatches<R, D, RestR extends [] ? true : false> extends true
      ? SegmentsMatch<RestR, RestD>
      : false
    : false
  : Declared extends []
    ? true
    : false;
type OperationMethod<M extends string> = Lowercase<M> extends 'head' ? 'get' : Lowercase<M>;

/** The operations a request can reach: for each path of the document the requested path matches, the method's operation. */
type ReachedOperations<M extends string, Requested extends string> = {
  [P in keyof paths]: SegmentsMatch<Segments<Requested>, Segments<P>> extends true ? NonNullable<paths[P][OperationMethod<M> & keyof paths[P]]> : never;
}[keyof paths];

type JsonContent<R> = R extends { content: { 'application/json': infer Body } } ? Body : never;
/** Every body the operations declare, success and error. */
type DeclaredBodies<Operation> = Operation extends { responses: infer Responses } ? JsonContent<Responses[keyof Responses]> : never;
type Successes<Bodies> = Extract<Bodies, { success: true }>;

/**
 * An answer's body as a test reads it: the success envelope of the operation and the error
 * envelope in one, since a test checks the status before it reads `data` or `error`, and the
 * client has validated the body against openapi.yaml for that status. `data` is unknown when the
 * request's path is not known to the type checker (or matches no operation).
 */
export interface AnswerBody<Data = unknown, PageInfo = Schemas['Pagination'] | undefined> {
  success: boolean;
  data: Data;
  pagination: PageInfo;
  error: ErrorBody;
  meta: Schemas['Meta'];
}

/** The error object, with the `details` that openapi.yaml's description gives the codes that carry one. */
export type ErrorBody = Omit<Schemas['ErrorBody'], 'details'> & {
  details?: {
    /** A validation failure: every failure found. */
    errors?: { code: string; param: string; message: string }[];
    /** `forbidden`: why, when it is not a missing scope. */
    reason?: string;
    required_scope?: string;
    /** `insufficient_balance`. */
    required?: number;
    available?: number;
    currency?: string;
    [key: string]: unknown;
  };
};

type BodyOf<Operation> = [Successes<DeclaredBodies<Operation>>] extends [never]
  ? AnswerBody
  : AnswerBody<
      Successes<DeclaredBodies<Operation>> extends { data: infer Data } ? Data : never,
      Successes<DeclaredBodies<Operation>> extends { pagination: infer PageInfo } ? PageInfo : undefined
    >;

/** What call() answers for `method` on `path`, typed from the generated types of openapi.yaml. */
export type Answer<M extends string, P extends string> = ApiResponse<BodyOf<ReachedOperations<M, P>>>;
/** The `data` of a success answer to `method` on `path`. */
export type AnswerData<M extends string, P extends string> = BodyOf<ReachedOperations<M, P>>['data'];

export interface ApiResponse<Body extends AnswerBody<unknown, unknown> = AnswerBody> {
  status: number;
  body: Body;
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
export async function call<M extends string, P extends string>(method: M, path: P, options: RequestOptions = {}): Promise<Answer<M, P>> {
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
  // Validated above against openapi.yaml for this operation and status.
  return { status: response.status, body: body as Answer<M, P>['body'], headers: response.headers, operationId };
}

/**
 * Checks one answer against the contract: JSON with the request id in the header and the body,
 * a status the operation declares, a body valid for that status. `path` is relative to /api/v1.
 */
async function checkAnswer(method: string, path: string, response: Response): Promise<{ body: unknown; operationId: string | undefined }> {
  const api = await loadContract();
  const pathOnly = path.split('?')[0];
  // As Dispatch routes (app/api.ts): a path of the document written without parameters, asked
  // with a method it does not have, matches no templated path either.
  const literal = api.definition.paths?.[pathOnly] as Record<string, unknown> | undefined;
  const routable = !literal || literal[method.toLowerCase() === 'head' ? 'get' : method.toLowerCase()] !== undefined;
  const operation = routable ? api.router.matchOperation({ method, path: pathOnly, headers: {} }) : undefined;
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
function checkEnvelope(what: string, response: Response, text: string): unknown {
  expect(response.headers.get('content-type') ?? '', `${what}: content type`).to.match(/^application\/json/);
  const body = JSON.parse(text) as { meta?: { request_id?: unknown } };
  expect(response.headers.get('x-request-id'), `${what}: X-Request-Id`).to.equal(body.meta?.request_id);
  return body;
}

/**
 * An answer no operation gives (an unknown path, or a path the process does not serve, such as
 * the API on a worker): 404 or 405 in the error envelope of openapi.yaml. Answers its body.
 */
export async function checkUnrouted(what: string, response: Response): Promise<Schemas['ErrorEnvelope']> {
  const api = await loadContract();
  const body = checkEnvelope(what, response, await response.text());
  expect([404, 405], `${what} matches no operation`).to.include(response.status);
  assertValid(api.validator.validateResponse(body, errorOperation(api), 400), what, body);
  return body as Schemas['ErrorEnvelope'];
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
