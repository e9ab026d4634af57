// The operator's admin API (`/admin/...`, bearer ADMIN_TOKEN). It is x-internal and not part of
// the SDK, so this is a small fetch client over the generated types; failures become the SDK's
// DispatchError subclasses, built from the same error envelope, so the CLI treats both alike.
// No retries: admin writes carry no idempotency key.
import type { components } from '../handlers/generated/openapi.ts';
import { ApiError, DispatchConnectionError, errorFromResponse } from '../sdk/errors.ts';

type Schemas = components['schemas'];
export type Account = Schemas['Account'];
export type Balance = Schemas['Balance'];
export type ApiKeyWithSecret = Schemas['ApiKeyWithSecret'];
export type Route = Schemas['Route'];
export type RouteAssignment = Schemas['RouteAssignment'];
export type Sender = Schemas['Sender'];
export type BlocklistEntry = Schemas['BlocklistEntry'];
export type DeletedResult = Schemas['DeletedResult'];
export type CreateAccountRequest = Partial<Schemas['AdminCreateAccountRequest']> & Pick<Schemas['AdminCreateAccountRequest'], 'email' | 'name'>;
export type CreditRequest = Schemas['AdminCreditRequest'];
export type CreateApiKeyRequest = Partial<Schemas['CreateApiKeyRequest']> & Pick<Schemas['CreateApiKeyRequest'], 'name'>;
export type CreateRouteRequest = Partial<Schemas['AdminCreateRouteRequest']> & Omit<Schemas['AdminCreateRouteRequest'], 'is_active'>;
export type UpdateRouteRequest = Schemas['AdminUpdateRouteRequest'];
export type CreateBlocklistRequest = Schemas['AdminCreateBlocklistRequest'];
export type SenderAction = 'approve' | 'reject' | 'suspend';

const segment = (value: string | number) => encodeURIComponent(String(value));

export class AdminClient {
  readonly #baseUrl: string;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  constructor(options: { baseUrl: string; token: string; fetch?: typeof fetch }) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#fetch = options.fetch ?? globalThis.fetch;
  }

  createAccount = (body: CreateAccountRequest) => this.#call<Account>('POST', '/admin/accounts', body);
  getAccount = (id: string) => this.#call<Account>('GET', `/admin/accounts/${segment(id)}`);
  credit = (id: string, body: CreditRequest) => this.#call<Balance>('POST', `/admin/accounts/${segment(id)}/credit`, body);
  createApiKey = (accountId: string, body: CreateApiKeyRequest) => this.#call<ApiKeyWithSecret>('POST', `/admin/accounts/${segment(accountId)}/api-keys`, body);

  createRoute = (body: CreateRouteRequest) => this.#call<Route>('POST', '/admin/routes', body);
  listRoutes = () => this.#call<{ object: 'list'; data: Route[] }>('GET', '/admin/routes');
  getRoute = (id: string) => this.#call<Route>('GET', `/admin/routes/${segment(id)}`);
  updateRoute = (id: string, body: UpdateRouteRequest) => this.#call<Route>('PATCH', `/admin/routes/${segment(id)}`, body);
  assignRoute = (accountId: string, routeId: string, priority: number) =>
    this.#call<RouteAssignment>('PUT', `/admin/accounts/${segment(accountId)}/routes/${segment(routeId)}`, { priority });
  unassignRoute = (accountId: string, routeId: string) => this.#call<DeletedResult>('DELETE', `/admin/accounts/${segment(accountId)}/routes/${segment(routeId)}`);

  sender = (id: string, action: SenderAction) => this.#call<Sender>('POST', `/admin/senders/${segment(id)}/${action}`);

  block = (body: CreateBlocklistRequest) => this.#call<BlocklistEntry>('POST', '/admin/blocklist', body);
  unblock = (number: string, accountId?: string) =>
    this.#call<DeletedResult>('DELETE', `/admin/blocklist/${segment(number)}${accountId ? `?account_id=${segment(accountId)}` : ''}`);

  /** One admin operation: the envelope's `data`, or a DispatchError. */
  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(`${this.#baseUrl}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      text = await response.text();
    } catch (error) {
      throw new DispatchConnectionError(error);
    }
    let parsed: unknown = text;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON (a proxy's page): errorFromResponse reports the text.
    }
    if (!response.ok) throw errorFromResponse(response.status, response.headers, parsed);
    const data = (parsed as { data?: T } | undefined)?.data;
    if (data === undefined) {
      throw new ApiError({
        status: response.status,
        type: 'api_error',
        code: 'unexpected_response',
        message: `HTTP ${response.status} without a Dispatch envelope`,
        requestId: response.headers.get('x-request-id'),
        headers: response.headers,
      });
    }
    return data;
  }
}
