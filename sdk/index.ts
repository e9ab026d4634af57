// The Dispatch SDK: openapi-fetch over the types openapi-typescript generates from openapi.yaml
// (generated/openapi.ts), plus a thin layer: the bearer key, typed errors, retries with
// backoff, an Idempotency-Key on every send, and iteration over every page of a list. Request and
// response types all come from the generated `paths`; nothing here restates them.
import createClient, { type Client, type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './generated/openapi.ts';
import { ApiError, DispatchConnectionError, DispatchError, errorFromResponse, RateLimitError } from './errors.ts';

export * from './errors.ts';
export * from './webhooks.ts';
export type { components, paths };

export const SDK_VERSION = '0.1.0';
export const DEFAULT_BASE_URL = 'http://127.0.0.1:3000/api/v1';

/** Backoff before retry n (from 0): 0.5 s, 1 s, 2 s, ... capped at 8 s, minus up to 25 % jitter. */
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A `Retry-After` longer than this (a daily or monthly limit) is not waited out: the error is thrown. */
const MAX_RETRY_AFTER_SECONDS = 60;

type Schemas = components['schemas'];
export type Message = Schemas['Message'];
/** A message with everything that happened to it, in time order; skip an entry `kind` you do not know. */
export type MessageStory = Schemas['MessageStory'];
export type BulkResult = Schemas['BulkResult'];
export type BulkCancel = Schemas['BulkCancel'];
export type MessagePreview = Schemas['MessagePreview'];
export type RecipientPreview = Schemas['RecipientPreview'];
export type Sender = Schemas['Sender'];
export type ApiKey = Schemas['ApiKey'];
export type ApiKeyWithSecret = Schemas['ApiKeyWithSecret'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type WebhookEndpointWithSecret = Schemas['WebhookEndpointWithSecret'];
export type RotatedWebhookEndpoint = Schemas['RotatedWebhookEndpoint'];
export type WebhookAttempt = Schemas['WebhookAttempt'];
/** What a resend answers: the delivery queued; its attempts are listed like any delivery's. */
export type WebhookResend = Schemas['WebhookResend'];
/** What POST /webhooks/{id}/test answers; a receiver meets it as an event of a type it need not know. */
export type WebhookTestEvent = Schemas['WebhookTestEvent'];
export type Account = Schemas['Account'];
export type Balance = Schemas['Balance'];
export type Usage = Schemas['Usage'];
export type BalanceTransaction = Schemas['BalanceTransaction'];
export type Stats = Schemas['Stats'];
export type Pagination = Schemas['Pagination'];
export type InboundMessage = Schemas['InboundMessage'];
export type OptOut = Schemas['OptOut'];
export type OptOutImportResult = Schemas['OptOutImportResult'];
export type KeywordSettings = Schemas['KeywordSettings'];

/** The customer API: the admin operations (`/admin/...`) are x-internal and not part of the SDK. */
export type PublicPaths = { [P in keyof paths as P extends `/admin/${string}` ? never : P]: paths[P] };

/** The query parameters of an operation. */
export type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
/** One page of a paged list. */
export interface Page<T> {
  data: T[];
  pagination: Pagination;
}
/**
 * A request body in which the fields the server defaults may be left out. (openapi-typescript
 * marks fields with a `default` as required, which is right for the server's validated input.)
 */
type WithDefaults<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

export interface DispatchOptions {
  /** An API key, `ds_live_...`. */
  apiKey: string;
  /** Default `http://127.0.0.1:3000/api/v1`. */
  baseUrl?: string;
  /** Retries after a 429, a 5xx or a network failure (default 2, so at most 3 attempts). */
  maxRetries?: number;
  /** A fetch implementation (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Sent as `User-Agent` (default `dispatch-sdk-typescript/<version>`). */
  userAgent?: string;
}

export interface SendOptions {
  /** Sent as `Idempotency-Key`; a UUID v4 is generated when omitted, so that retries never send twice. */
  idempotencyKey?: string;
}

type Attempt<D> = () => Promise<{ data?: D; error?: unknown; response: Response }>;

export class Dispatch {
  /** The underlying openapi-fetch client (with the key, without unwrapping or retries). */
  readonly client: Client<PublicPaths>;
  readonly #maxRetries: number;

  constructor(options: DispatchOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey === '') throw new TypeError('Dispatch: apiKey is required');
    this.#maxRetries = Math.max(0, Math.floor(options.maxRetries ?? 2));
    this.client = createClient<PublicPaths>({ baseUrl: options.baseUrl ?? DEFAULT_BASE_URL, fetch: options.fetch });
    this.client.use(dispatchMiddleware(options.apiKey, options.userAgent ?? `dispatch-sdk-typescript/${SDK_VERSION}`));
  }

  readonly messages = {
    send: (body: Schemas['SendMessageRequest'], { idempotencyKey = randomUUID() }: SendOptions = {}) =>
      this.#data(() => this.client.POST('/messages/send', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }), true),
    bulk: (body: Schemas['SendBulkRequest'], { idempotencyKey = randomUUID() }: SendOptions = {}) =>
      this.#data(() => this.client.POST('/messages/bulk', { body, params: { header: { 'Idempotency-Key': idempotencyKey } } }), true),
    // Writes nothing: a repeat answers afresh.
    preview: (body: Schemas['MessagePreviewRequest']) => this.#data(() => this.client.POST('/messages/preview', { body }), true),
    get: (id: string) => this.#data(() => this.client.GET('/messages/{id}', { params: { path: { id } } }), true),
    story: (id: string) => this.#data(() => this.client.GET('/messages/{id}/story', { params: { path: { id } } }), true),
    list: (query: Query<'listMessages'> = {}) => this.#page(() => this.client.GET('/messages', { params: { query } })),
    listAll: (query: Query<'listMessages'> = {}) => paginate((page) => this.messages.list({ ...query, page }), query.page),
    // A repeat answers the canceled message again.
    cancel: (id: string) => this.#data(() => this.client.POST('/messages/{id}/cancel', { params: { path: { id } } }), true),
    // A repeat answers the same counts.
    cancelBulk: (bulkId: string) => this.#data(() => this.client.POST('/messages/bulk/{bulk_id}/cancel', { params: { path: { bulk_id: bulkId } } }), true),
  };

  readonly inboundMessages = {
    list: (query: Query<'listInboundMessages'> = {}) => this.#page(() => this.client.GET('/inbound-messages', { params: { query } })),
    listAll: (query: Query<'listInboundMessages'> = {}) => paginate((page) => this.inboundMessages.list({ ...query, page }), query.page),
    get: (id: string) => this.#data(() => this.client.GET('/inbound-messages/{id}', { params: { path: { id } } }), true),
  };

  readonly account = {
    get: () => this.#data(() => this.client.GET('/account'), true),
    // A repeat sets the same values again.
    update: (body: Schemas['UpdateAccountRequest']) => this.#data(() => this.client.PATCH('/account', { body }), true),
  };

  readonly balance = {
    get: () => this.#data(() => this.client.GET('/balance'), true),
    transactions: (query: Query<'listBalanceTransactions'> = {}) => this.#page(() => this.client.GET('/balance/transactions', { params: { query } })),
    transactionsAll: (query: Query<'listBalanceTransactions'> = {}) => paginate((page) => this.balance.transactions({ ...query, page }), query.page),
  };

  readonly stats = {
    get: (query: Query<'getStats'> = {}) => this.#data(() => this.client.GET('/stats', { params: { query } }), true),
  };

  readonly usage = {
    get: (query: Query<'getUsage'> = {}) => this.#data(() => this.client.GET('/usage', { params: { query } }), true),
  };

  readonly senders = {
    list: (query: Query<'listSenders'> = {}) => this.#page(() => this.client.GET('/senders', { params: { query } })),
    listAll: (query: Query<'listSenders'> = {}) => paginate((page) => this.senders.list({ ...query, page }), query.page),
    create: (body: Schemas['CreateSenderRequest']) => this.#data(() => this.client.POST('/senders/create', { body }), false),
    get: (id: string) => this.#data(() => this.client.GET('/senders/{id}', { params: { path: { id } } }), true),
  };

  readonly apiKeys = {
    list: () => this.#data(() => this.client.GET('/api-keys'), true),
    /** The key this client calls with: its scopes and limits. Needs no scope. */
    current: () => this.#data(() => this.client.GET('/api-keys/current'), true),
    create: (body: WithDefaults<Schemas['CreateApiKeyRequest'], 'rate_limit'>) =>
      this.#data(() => this.client.POST('/api-keys/create', { body: body as Schemas['CreateApiKeyRequest'] }), false),
    revoke: (id: string) => this.#data(() => this.client.DELETE('/api-keys/{id}', { params: { path: { id } } }), true),
  };

  readonly webhooks = {
    list: () => this.#data(() => this.client.GET('/webhooks'), true),
    create: (body: WithDefaults<Schemas['CreateWebhookEndpointRequest'], 'events'>) =>
      this.#data(() => this.client.POST('/webhooks/create', { body: body as Schemas['CreateWebhookEndpointRequest'] }), false),
    get: (id: string) => this.#data(() => this.client.GET('/webhooks/{id}', { params: { path: { id } } }), true),
    delete: (id: string) => this.#data(() => this.client.DELETE('/webhooks/{id}', { params: { path: { id } } }), true),
    // A repeat sets the same values again.
    update: (id: string, body: Schemas['UpdateWebhookEndpointRequest']) =>
      this.#data(() => this.client.PATCH('/webhooks/{id}', { params: { path: { id } }, body }), true),
    listAttempts: (id: string, query: Query<'listWebhookAttempts'> = {}) =>
      this.#page(() => this.client.GET('/webhooks/{id}/attempts', { params: { path: { id }, query } })),
    // Not retried after a 5xx: a repeat would send a second test event, and a second rotation would end the first secret.
    sendTest: (id: string) => this.#data(() => this.client.POST('/webhooks/{id}/test', { params: { path: { id } } }), false),
    // Not retried after a 5xx either: a repeat may queue a second delivery (harmless to a receiver that dedupes, but not asked for).
    resend: (id: string, eventId: string) =>
      this.#data(() => this.client.POST('/webhooks/{id}/events/{event_id}/resend', { params: { path: { id, event_id: eventId } } }), false),
    rotateSecret: (id: string, body: WithDefaults<Schemas['RotateWebhookSecretRequest'], 'expires_in_seconds'> = {}) =>
      this.#data(
        () => this.client.POST('/webhooks/{id}/rotate-secret', { params: { path: { id } }, body: body as Schemas['RotateWebhookSecretRequest'] }),
        false,
      ),
  };

  readonly events = {
    list: (query: Query<'listEvents'> = {}) => this.#page(() => this.client.GET('/events', { params: { query } })),
    listAll: (query: Query<'listEvents'> = {}) => paginate((page) => this.events.list({ ...query, page }), query.page),
  };

  readonly optOuts = {
    list: (query: Query<'listOptOuts'> = {}) => this.#page(() => this.client.GET('/opt-outs', { params: { query } })),
    listAll: (query: Query<'listOptOuts'> = {}) => paginate((page) => this.optOuts.list({ ...query, page }), query.page),
    // Retried like a send: a repeat of an import changes nothing more (its numbers are then `unchanged`).
    create: (body: Schemas['CreateOptOutsRequest']) => this.#data(() => this.client.POST('/opt-outs/create', { body }), true),
    delete: (number: string) => this.#data(() => this.client.DELETE('/opt-outs/{number}', { params: { path: { number } } }), true),
  };

  readonly keywords = {
    get: () => this.#data(() => this.client.GET('/keywords'), true),
    // A repeat sets the same values again.
    update: (body: Schemas['UpdateKeywordSettingsRequest']) => this.#data(() => this.client.POST('/keywords/update', { body }), true),
  };

  /** The envelope's `data`. */
  async #data<E extends { data: unknown }>(attempt: Attempt<E>, idempotent: boolean): Promise<E['data']> {
    return (await this.#request(attempt, idempotent)).data;
  }

  /** One page of a paged list: `data` and `pagination`. Listing is always safe to retry. */
  async #page<T>(attempt: Attempt<{ data: T[]; pagination: Pagination }>): Promise<Page<T>> {
    const { data, pagination } = await this.#request(attempt, true);
    return { data, pagination };
  }

  /**
   * Runs one operation: answers the success envelope or throws a DispatchError, retrying a 429
   * (always: it was refused before running), and a 5xx or network failure when the operation is
   * `idempotent` (reads, deletes, cancels, previews, and sends, which carry an Idempotency-Key).
   */
  async #request<E>(attempt: Attempt<E>, idempotent: boolean): Promise<E> {
    for (let retry = 0; ; retry++) {
      let failure: DispatchError;
      try {
        const { data, error, response } = await attempt();
        if (response.ok && data !== undefined) return data;
        failure = response.ok
          ? new ApiError({
              status: response.status,
              type: 'api_error',
              code: 'unexpected_response',
              message: `HTTP ${response.status} with an empty body`,
              requestId: response.headers.get('x-request-id'),
              headers: response.headers,
            })
          : errorFromResponse(response.status, response.headers, error);
      } catch (thrown) {
        if (!(thrown instanceof DispatchError)) throw thrown;
        failure = thrown;
      }
      const delay = retry < this.#maxRetries ? retryDelayMs(failure, retry, idempotent) : null;
      if (delay === null) throw failure;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** How long to wait before retry number `retry` (from 0), or null when the failure is final. */
export function retryDelayMs(failure: DispatchError, retry: number, idempotent: boolean): number | null {
  const backoff = Math.min(INITIAL_BACKOFF_MS * 2 ** retry, MAX_BACKOFF_MS) * (1 - Math.random() * 0.25);
  if (failure instanceof RateLimitError) {
    if (failure.retryAfter === null) return backoff;
    return failure.retryAfter <= MAX_RETRY_AFTER_SECONDS ? failure.retryAfter * 1000 : null;
  }
  // The first attempt of this very send is still running on the server: the contract says retry after a pause.
  if (failure.status === 409 && failure.code === 'idempotency_key_in_use') return backoff;
  if (!idempotent) return null;
  return failure instanceof DispatchConnectionError || failure.status >= 500 ? backoff : null;
}

/** Every item of a paged list, fetching page after page while `has_more`. */
export async function* paginate<T>(list: (page: number) => Promise<Page<T>>, firstPage = 1): AsyncGenerator<T, void, undefined> {
  for (let page = firstPage; ; page++) {
    const { data, pagination } = await list(page);
    yield* data;
    if (!pagination.has_more || data.length === 0) return;
  }
}

function dispatchMiddleware(apiKey: string, userAgent: string): Middleware {
  return {
    onRequest({ request }) {
      request.headers.set('Authorization', `Bearer ${apiKey}`);
      request.headers.set('Accept', 'application/json');
      request.headers.set('User-Agent', userAgent);
      return request;
    },
    onResponse({ response }) {
      // A success that is not JSON (a proxy's page, say) would otherwise fail as a bare SyntaxError.
      if (response.ok && !/^application\/(.+\+)?json/i.test(response.headers.get('content-type') ?? '')) {
        throw new ApiError({
          status: response.status,
          type: 'api_error',
          code: 'unexpected_response',
          message: `HTTP ${response.status} answered ${response.headers.get('content-type') ?? 'no content type'}, not JSON`,
          requestId: response.headers.get('x-request-id'),
          headers: response.headers,
        });
      }
      return undefined;
    },
    onError({ error }) {
      return error instanceof DispatchError ? error : new DispatchConnectionError(error);
    },
  };
}

function randomUUID(): string {
  return globalThis.crypto.randomUUID();
}
