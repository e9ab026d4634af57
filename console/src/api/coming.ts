/**
 * Operations the console uses that openapi.yaml does not declare yet. They are called through
 * plain fetch with hand-written types here, in one place, so that adopting them once they are in
 * the document is a change of this file alone: each function becomes one `api.GET`/`api.POST`.
 */
import { API_BASE, ApiFailure, type Schemas } from './client';
import { currentSession } from '../lib/session';

export type MessageStory = Schemas['MessageStory'];
export type StoryEntry = MessageStory['entries'][number];

export interface Operator {
  id: string | null;
  name: string;
  role: 'admin' | 'support' | 'viewer';
}

/**
 * An answer of an operation the server does not know, because it has not landed on it yet: an
 * unknown path, or a known path without that method (`GET /api-keys/current` meets `DELETE /api-keys/{id}`).
 */
export function isUnknownOperation(error: unknown): boolean {
  if (!(error instanceof ApiFailure)) return false;
  return (error.status === 404 && error.code === 'not_found') || (error.status === 405 && error.code === 'method_not_allowed');
}

async function request<Body>(method: 'GET' | 'POST', path: string): Promise<Body> {
  const session = currentSession();
  const response = await fetch(`${API_BASE}${path}`, {
    method,
    headers: session ? { Authorization: `Bearer ${session.token}` } : {},
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw new ApiFailure(response.status, body, response.headers.get('X-Request-Id'));
  return (body as { data: Body }).data;
}

/** GET /api-keys/current: the calling key, with its scopes. */
export const getCurrentKey = () => request<Schemas['ApiKey']>('GET', '/api-keys/current');

/** GET /messages/{id}/story: the message's timeline (statuses, attempts, events, webhook deliveries, ledger). */
export const getMessageStory = (id: string) => request<MessageStory>('GET', `/messages/${encodeURIComponent(id)}/story`);

/** POST /webhooks/{id}/events/{event_id}/resend: delivers the event to the endpoint again (202). */
export const resendWebhookEvent = (endpointId: string, eventId: string) =>
  request<unknown>('POST', `/webhooks/${encodeURIComponent(endpointId)}/events/${encodeURIComponent(eventId)}/resend`);

/** GET /admin/operators/current: who the operator token belongs to, and its role. */
export const getCurrentOperator = () => request<Operator>('GET', '/admin/operators/current');
