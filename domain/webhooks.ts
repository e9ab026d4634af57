import type { Knex } from 'knex';
import { findEvent, insertEvents, type EventRow } from '../db/events.ts';
import type { JobQueue } from '../db/queues.ts';
import {
  disableEndpoint,
  enableEndpoint,
  insertDeliveries,
  insertEndpoint,
  lockEndpoint,
  replaceSigningSecret,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
  type FanOutEndpoint,
} from '../db/webhooks.ts';
import { conflict, invalidRequest, notFound } from './errors.ts';
import { newId, randomBase62 } from './ids.ts';
import { checkWebhookUrl } from './ssrf-guard.ts';
import { laneJobOptions, laneOf, type LaneStanding } from './delivery-lanes.ts';
import { deliveryJob } from './webhook-deliveries.ts';

export interface EndpointRequest {
  url: string;
  description?: string | null;
  events?: string[];
}

const newSigningSecret = (): string => `whsec_${randomBase62(43)}`;

async function checkUrl(url: string, allowPrivate: boolean): Promise<void> {
  const problem = await checkWebhookUrl(url, { allowPrivate });
  if (problem) throw invalidRequest('url', problem);
}

/** Registers an endpoint; its URL must resolve to public addresses unless private ones are allowed. */
export async function createEndpoint(db: Knex, accountId: string, request: EndpointRequest, allowPrivate: boolean): Promise<EndpointRow> {
  await checkUrl(request.url, allowPrivate);
  return insertEndpoint(db, {
    id: newId('whe'),
    account_id: accountId,
    url: request.url,
    description: request.description ?? null,
    events: request.events ?? ['*'],
    signing_secret: newSigningSecret(),
  });
}

const subscribes = (endpoint: Pick<EndpointRow, 'events'>, type: string) => endpoint.events.includes('*') || endpoint.events.includes(type);

/**
 * One delivery, and its job, for each active endpoint of the event's account that subscribes to
 * its type, written in the transaction that records the events: no event is ever lost. Each job
 * waits in its endpoint's lane. `endpoints` are the active endpoints of the events' accounts, read
 * in this transaction.
 */
export async function fanOut(trx: Knex.Transaction, jobs: JobQueue, events: EventRow[], endpoints: FanOutEndpoint[]): Promise<void> {
  const deliveries = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.account_id === event.account_id && subscribes(endpoint, event.type))
      .map((endpoint) => ({ endpoint_id: endpoint.id, event_id: event.id })),
  );
  await deliver(trx, jobs, endpoints, deliveries);
}

/** Stores the deliveries and enqueues their jobs, each in its endpoint's lane; answers them stored. */
async function deliver(
  trx: Knex.Transaction,
  jobs: JobQueue,
  endpoints: (Pick<EndpointRow, 'id' | 'account_id'> & LaneStanding)[],
  deliveries: { endpoint_id: string; event_id: string }[],
): Promise<DeliveryRow[]> {
  const stored = await insertDeliveries(trx, deliveries);
  const byId = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint]));
  await jobs.enqueueMany(
    trx,
    'deliverWebhook',
    stored.map((delivery) => deliveryJob({ ...delivery, account_id: byId.get(delivery.endpoint_id)!.account_id })),
    (_, index) => laneJobOptions(stored[index].endpoint_id, laneOf(byId.get(stored[index].endpoint_id)!)),
  );
  return stored;
}

export interface EndpointChanges extends Partial<EndpointRequest> {
  is_active?: boolean;
}

/**
 * Changes an endpoint of the account. The URL is checked as at creation. `is_active` follows the
 * operator's rules: `true` enables it (failure count reset, as the admin enable does), `false`
 * disables it and abandons its pending deliveries, as the 25th failed delivery would.
 */
export async function changeEndpoint(db: Knex, accountId: string, id: string, changes: EndpointChanges, allowPrivate: boolean): Promise<EndpointRow> {
  if (changes.url !== undefined) await checkUrl(changes.url, allowPrivate);
  return db.transaction(async (trx) => {
    if (!(await lockEndpoint(trx, accountId, id))) throw notFound('webhook_endpoint', id);
    // Checked here rather than by the schema, so that an unknown id answers 404 whatever the body.
    if (Object.keys(changes).length === 0) throw invalidRequest(undefined, 'The request body must have at least one field.');
    const { is_active: active, ...fields } = changes;
    if (Object.keys(fields).length > 0) await updateEndpoint(trx, id, fields);
    if (active === true) await enableEndpoint(trx, id);
    if (active === false) await disableEndpoint(trx, id);
    return (await lockEndpoint(trx, accountId, id))!;
  });
}

/** One day, the default grace period of a replaced secret: time to deploy the new one to every receiver. */
const DEFAULT_SECRET_GRACE_SECONDS = 86_400;

/** A new signing secret for the endpoint; the replaced one is also signed with for graceSeconds. */
export async function rotateSigningSecret(db: Knex, accountId: string, id: string, graceSeconds = DEFAULT_SECRET_GRACE_SECONDS): Promise<EndpointRow> {
  const endpoint = await replaceSigningSecret(db, accountId, id, newSigningSecret(), graceSeconds);
  if (!endpoint) throw notFound('webhook_endpoint', id);
  return endpoint;
}

/** Locks a live endpoint (of the account, unless the operator asks), or refuses with 404. */
async function lockedEndpoint(trx: Knex.Transaction, accountId: string | undefined, id: string): Promise<EndpointRow> {
  const endpoint = await lockEndpoint(trx, accountId, id);
  if (!endpoint) throw notFound('webhook_endpoint', id);
  return endpoint;
}

/**
 * A disabled endpoint receives nothing, so a delivery asked for by hand is refused rather than
 * handed to it to be abandoned unattempted. `what` says what was asked for.
 */
function refuseDisabled(endpoint: EndpointRow, what: string): void {
  if (!endpoint.is_active) throw conflict(`The webhook endpoint '${endpoint.id}' is disabled; enable it before ${what}.`, 'invalid_state_transition');
}

/**
 * Records a `webhook.test` event and one delivery of it to this endpoint alone, whatever its
 * subscription, delivered (signed, retried) like any other.
 */
export async function sendTestEvent(db: Knex, jobs: JobQueue, accountId: string, id: string): Promise<EventRow> {
  return db.transaction(async (trx) => {
    const endpoint = await lockedEndpoint(trx, accountId, id);
    refuseDisabled(endpoint, 'sending it a test event');
    const [event] = await insertEvents(trx, [
      { id: newId('evt'), account_id: accountId, type: 'webhook.test', message_id: null, data: { object: 'webhook_test', endpoint_id: id } },
    ]);
    await deliver(trx, jobs, [endpoint], [{ endpoint_id: id, event_id: event.id }]);
    return event;
  });
}

export interface Resend {
  endpoint: EndpointRow;
  event: EventRow;
  delivery: DeliveryRow;
}

/**
 * One new delivery of an event to an endpoint, now, asked for by hand (a receiver that missed it
 * is fixed): whatever the endpoint subscribes to and whatever became of the event's earlier
 * deliveries, which are left alone. It is delivered (signed afresh, retried, counted) like any other. The event must be one
 * of the endpoint's account that is still listed (within retention). `accountId` scopes the
 * endpoint to the calling account; the operator gives none.
 */
export async function resendEvent(db: Knex, jobs: JobQueue, accountId: string | undefined, endpointId: string, eventId: string): Promise<Resend> {
  return db.transaction(async (trx) => {
    const endpoint = await lockedEndpoint(trx, accountId, endpointId);
    const event = await findEvent(trx, endpoint.account_id, eventId);
    if (!event) throw notFound('event', eventId, 'event_id');
    refuseDisabled(endpoint, 'resending an event to it');
    const [delivery] = await deliver(trx, jobs, [endpoint], [{ endpoint_id: endpoint.id, event_id: event.id }]);
    return { endpoint, event, delivery };
  });
}
