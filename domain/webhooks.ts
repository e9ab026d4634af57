import type { Knex } from 'knex';
import type { EventRow } from '../db/events.ts';
import type { JobQueue } from '../db/queues.ts';
import { laneJobOptions } from '../db/delivery-lanes.ts';
import { activeEndpointsOf, insertDeliveries, insertEndpoint, type EndpointRow } from '../db/webhooks.ts';
import { invalidRequest } from './errors.ts';
import { newId, randomBase62 } from './ids.ts';
import { checkWebhookUrl } from './ssrf-guard.ts';
import { laneOf } from './webhook-deliveries.ts';

export interface EndpointRequest {
  url: string;
  description?: string | null;
  events?: string[];
}

/** Registers an endpoint; its URL must resolve to public addresses unless private ones are allowed. */
export async function createEndpoint(db: Knex, accountId: string, request: EndpointRequest, allowPrivate: boolean): Promise<EndpointRow> {
  const problem = await checkWebhookUrl(request.url, { allowPrivate });
  if (problem) throw invalidRequest('url', problem);
  return insertEndpoint(db, {
    id: newId('whe'),
    account_id: accountId,
    url: request.url,
    description: request.description ?? null,
    events: request.events ?? ['*'],
    signing_secret: `whsec_${randomBase62(43)}`,
  });
}

const subscribes = (endpoint: Pick<EndpointRow, 'events'>, type: string) => endpoint.events.includes('*') || endpoint.events.includes(type);

/**
 * One delivery, and its job, for each active endpoint of the event's account that subscribes to
 * its type, written in the transaction that records the events: no event is ever lost. Each job
 * waits in its endpoint's lane.
 */
export async function fanOut(trx: Knex.Transaction, jobs: JobQueue, events: EventRow[]): Promise<void> {
  if (events.length === 0) return;
  const endpoints = await activeEndpointsOf(trx, events.map((event) => event.account_id));
  const deliveries = events.flatMap((event) =>
    endpoints.filter((endpoint) => endpoint.account_id === event.account_id && subscribes(endpoint, event.type)).map((endpoint) => ({ endpoint_id: endpoint.id, event_id: event.id })),
  );
  const stored = await insertDeliveries(trx, deliveries);
  const lanes = new Map(endpoints.map((endpoint) => [endpoint.id, laneOf(endpoint)]));
  await jobs.enqueueMany(
    trx,
    'deliverWebhook',
    stored.map((delivery) => ({ delivery_id: delivery.id })),
    (_, index) => laneJobOptions(stored[index].endpoint_id, lanes.get(stored[index].endpoint_id)!),
  );
}
