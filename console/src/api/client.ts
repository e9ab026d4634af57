import createClient, { type Middleware } from 'openapi-fetch';
import type { components, operations, paths } from './schema';
import { currentSession } from '../lib/session';

export type Schemas = components['schemas'];
export type ErrorEnvelope = Schemas['ErrorEnvelope'];
/** The query parameters of an operation, by operationId. */
export type QueryOf<Operation extends keyof operations> = NonNullable<operations[Operation]['parameters']['query']>;

/** The API's base path on the origin that serves the console. */
export const API_BASE = '/api/v1';

/** A refused or failed request: the API's error, with the request id a support person asks for. */
export class ApiFailure extends Error {
  readonly status: number;
  readonly code: string;
  readonly param: string | undefined;
  readonly requestId: string | null;
  readonly details: Record<string, unknown> | undefined;
  /** The operator role a 403 of the admin API asks for (in the error or in its details). */
  readonly requiredRole: string | undefined;

  constructor(status: number, body: unknown, requestId: string | null) {
    const error = (body as Partial<ErrorEnvelope> | undefined)?.error;
    super(error?.message ?? `The request failed with HTTP ${status}.`);
    this.status = status;
    this.code = error?.code ?? 'http_error';
    this.param = error?.param;
    this.details = error?.details;
    const role = (error as { required_role?: unknown } | undefined)?.required_role ?? error?.details?.required_role;
    this.requiredRole = typeof role === 'string' ? role : undefined;
    this.requestId = (body as Partial<ErrorEnvelope> | undefined)?.meta?.request_id ?? requestId;
  }
}

const authorize: Middleware = {
  onRequest({ request }) {
    const session = currentSession();
    if (session) request.headers.set('Authorization', `Bearer ${session.token}`);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: API_BASE });
api.use(authorize);

interface Answer<Body> {
  data?: Body;
  error?: unknown;
  response: Response;
}

/** The body of a successful answer, or an ApiFailure carrying the API's message and request id. */
export async function unwrap<Body>(call: Promise<Answer<Body>>): Promise<Body> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw new ApiFailure(response.status, error, response.headers.get('X-Request-Id'));
  return data;
}
