// The operator's admin API (`/admin/...`, bearer ADMIN_TOKEN or an operator's token `op_...`). It is x-internal and not part of
// the SDK, so this is a small fetch client over the generated types; failures become the SDK's
// DispatchError subclasses, built from the same error envelope, so the CLI treats both alike.
// No retries: admin writes carry no idempotency key.
import type { components, operations } from '../sdk/generated/openapi.ts';
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
export type AdminSender = Schemas['AdminSender'];
export type AdminMessage = Schemas['AdminMessage'];
export type AccountRoute = Schemas['AccountRoute'];
export type ApiKey = Schemas['ApiKey'];
export type BalanceTransaction = Schemas['BalanceTransaction'];
export type MessageStory = Schemas['MessageStory'];
export type Pagination = Schemas['Pagination'];
export type AuditLogEntry = Schemas['AuditLogEntry'];
export type AccountStatusAction = 'suspend' | 'close' | 'reactivate';
export type Operator = Schemas['Operator'];
export type OperatorWithToken = Schemas['OperatorWithToken'];
export type OperatorRole = Schemas['OperatorRole'];
export type CurrentOperator = Schemas['CurrentOperator'];
export type CreateOperatorRequest = Schemas['AdminCreateOperatorRequest'];
/** A page of a paged admin list. */
export interface AdminPage<T> {
  data: T[];
  pagination: Pagination;
}
type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;

const segment = (value: string | number) => encodeURIComponent(String(value));

/** `?a=1&b=x` from the values given, leaving out the undefined ones. */
const queryString = (query: Record<string, string | number | boolean | undefined>) => {
  const given = Object.entries(query).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined);
  return given.length === 0 ? '' : `?${new URLSearchParams(given.map(([name, value]): [string, string] => [name, String(value)])).toString()}`;
};

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
  listAccounts = (query: Query<'adminListAccounts'> = {}) => this.#page<Account>(`/admin/accounts${queryString(query)}`);
  accountStatus = (id: string, action: AccountStatusAction, reason: string) =>
    this.#call<Account>('POST', `/admin/accounts/${segment(id)}/${action}`, { reason });
  listAuditLog = (query: Query<'adminListAuditLog'> = {}) => this.#page<AuditLogEntry>(`/admin/audit-log${queryString(query)}`);
  accountNote = (id: string, text: string) => this.#call<AuditLogEntry>('POST', `/admin/accounts/${segment(id)}/notes`, { text });

  createOperator = (body: CreateOperatorRequest) => this.#call<OperatorWithToken>('POST', '/admin/operators', body);
  listOperators = (query: Query<'adminListOperators'> = {}) => this.#page<Operator>(`/admin/operators${queryString(query)}`);
  revokeOperator = (id: string) => this.#call<Operator>('POST', `/admin/operators/${segment(id)}/revoke`);
  currentOperator = () => this.#call<CurrentOperator>('GET', '/admin/operators/current');

  createRoute = (body: CreateRouteRequest) => this.#call<Route>('POST', '/admin/routes', body);
  listRoutes = () => this.#call<{ object: 'list'; data: Route[] }>('GET', '/admin/routes');
  getRoute = (id: string) => this.#call<Route>('GET', `/admin/routes/${segment(id)}`);
  updateRoute = (id: string, body: UpdateRouteRequest) => this.#call<Route>('PATCH', `/admin/routes/${segment(id)}`, body);
  assignRoute = (accountId: string, routeId: string, priority: number) =>
    this.#call<RouteAssignment>('PUT', `/admin/accounts/${segment(accountId)}/routes/${segment(routeId)}`, { priority });
  unassignRoute = (accountId: string, routeId: string) =>
    this.#call<DeletedResult>('DELETE', `/admin/accounts/${segment(accountId)}/routes/${segment(routeId)}`);

  sender = (id: string, action: SenderAction) => this.#call<Sender>('POST', `/admin/senders/${segment(id)}/${action}`);
  listSenders = (query: Query<'adminListSenders'> = {}) => this.#page<AdminSender>(`/admin/senders${queryString(query)}`);

  listAccountRoutes = (accountId: string) => this.#call<{ object: 'list'; data: AccountRoute[] }>('GET', `/admin/accounts/${segment(accountId)}/routes`);
  listAccountApiKeys = (accountId: string) => this.#call<{ object: 'list'; data: ApiKey[] }>('GET', `/admin/accounts/${segment(accountId)}/api-keys`);
  listAccountLedger = (accountId: string, query: Query<'adminListAccountLedger'> = {}) =>
    this.#page<BalanceTransaction>(`/admin/accounts/${segment(accountId)}/ledger${queryString(query)}`);
  listBlocklist = (query: Query<'adminListBlocklist'> = {}) => this.#page<BlocklistEntry>(`/admin/blocklist${queryString(query)}`);
  listMessages = (query: Query<'adminListMessages'> = {}) => this.#page<AdminMessage>(`/admin/messages${queryString(query)}`);
  messageStory = (id: string) => this.#call<MessageStory>('GET', `/admin/messages/${segment(id)}/story`);

  block = (body: CreateBlocklistRequest) => this.#call<BlocklistEntry>('POST', '/admin/blocklist', body);
  unblock = (number: string, accountId?: string) =>
    this.#call<DeletedResult>('DELETE', `/admin/blocklist/${segment(number)}${accountId ? `?account_id=${segment(accountId)}` : ''}`);

  /** One admin operation: the envelope's `data`, or a DispatchError. */
  async #call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.#envelope<T>(method, path, body)).data;
  }

  /** One page of a paged admin list: `data` with its `pagination`. */
  async #page<T>(path: string): Promise<AdminPage<T>> {
    const { data, pagination } = await this.#envelope<T[]>('GET', path);
    return { data, pagination: pagination as Pagination };
  }

  async #envelope<T>(method: string, path: string, body?: unknown): Promise<{ data: T; pagination?: Pagination }> {
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
    const envelope = parsed as { data?: T; pagination?: Pagination } | undefined;
    const data = envelope?.data;
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
    return { data, pagination: envelope?.pagination };
  }
}
