import type { Knex } from 'knex';
import type { AccountRow } from '../db/accounts.ts';
import type { ApiKeyRow } from '../db/api-keys.ts';
import type { JobQueue } from '../db/queues.ts';
import type { Operator } from '../domain/audit.ts';
import type { InboundLog } from '../domain/inbound.ts';
import type { Clock } from '../lib/clock.ts';
import type { SendGroupCommit } from '../domain/send-group-commit.ts';
import type { components, operations } from '../sdk/generated/openapi.ts';

export type OperationId = keyof operations;
export type Schemas = components['schemas'];

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type Responses<O extends OperationId> = operations[O]['responses'];
type SuccessStatus<O extends OperationId> = Extract<keyof Responses<O>, 200 | 201 | 202>;
type EnvelopeData<T> = T extends { data: infer Data } ? Data : never;
type EnvelopePagination<T> = T extends { pagination: infer P } ? P : never;

/** What a handler answers: a success status the document declares for it, that status's `data`, and any extra headers. */
export type Result<O extends OperationId> = { headers?: Record<string, string> } & {
  [S in SuccessStatus<O>]: [EnvelopePagination<JsonContent<Responses<O>[S]>>] extends [never]
    ? { status: S; data: EnvelopeData<JsonContent<Responses<O>[S]>> }
    : { status: S; data: EnvelopeData<JsonContent<Responses<O>[S]>>; pagination: EnvelopePagination<JsonContent<Responses<O>[S]>> };
}[SuccessStatus<O>];

type Parameters<O extends OperationId, In extends string> =
  operations[O]['parameters'] extends Record<In, infer P> ? ([P] extends [undefined] ? Record<string, never> : NonNullable<P>) : Record<string, never>;

/**
 * The query parameters openapi.yaml gives a default: request validation fills them in
 * (app/request-formats.ts), so a handler always has them. A test keeps this list the document's.
 */
export const DEFAULTED_QUERY_PARAMETERS = ['page', 'limit', 'period'] as const;
type Defaulted = (typeof DEFAULTED_QUERY_PARAMETERS)[number];
type WithDefaults<Q> = Omit<Q, Defaulted & keyof Q> & { [K in Defaulted & keyof Q]-?: NonNullable<Q[K]> };

/** The validated request, typed from the document (query and path values already coerced, defaults filled in). */
export interface RequestOf<O extends OperationId> {
  params: Parameters<O, 'path'>;
  query: WithDefaults<Parameters<O, 'query'>>;
  headers: Record<string, string | string[] | undefined>;
  body: operations[O] extends { requestBody: infer B } ? JsonContent<NonNullable<B>> : undefined;
}

export interface CustomerCaller {
  kind: 'customer';
  account: AccountRow;
  apiKey: ApiKeyRow;
}

export interface AdminCaller {
  kind: 'admin';
  /** Who is calling: root (ADMIN_TOKEN) or a named operator; audited writes record it. */
  operator: Operator;
}

/** What the wiring hands every handler: the database and the settings handlers read. */
export interface Services {
  db: Knex;
  jobs: JobQueue;
  settings: { webhookAllowPrivateUrls: boolean };
  /** Accepts single sends, several to a transaction when they arrive together. */
  sends: SendGroupCommit;
  /** The last use of a key as this process knows it (unwritten uses included). */
  keyLastUsed: (keyId: string, stored: Date | null) => Date | null;
  /** Where an HTTP route's provider posts inbound messages, from the route's secret token (PUBLIC_URL known once listening). */
  inboundUrl: (dlrToken: string) => string;
  /** Where a handler reports what it gave up on while its request succeeded (a keyword's auto-reply it could not send). */
  log: InboundLog;
  /** The time of day the rules read (a test sets it). */
  clock: Clock;
}

export interface Context<Caller> {
  services: Services;
  caller: Caller;
  requestId: string;
}

export type CustomerHandler<O extends OperationId> = (request: RequestOf<O>, context: Context<CustomerCaller>) => Promise<Result<O>>;
export type AdminHandler<O extends OperationId> = (request: RequestOf<O>, context: Context<AdminCaller>) => Promise<Result<O>>;

/** Admin operations are named `admin...`; every other operation is the customer's. */
export type OperationHandler<O extends OperationId> = O extends `admin${string}` ? AdminHandler<O> : CustomerHandler<O>;

export type HandlerMap = { [O in OperationId]: OperationHandler<O> };
