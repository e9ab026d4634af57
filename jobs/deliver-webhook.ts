import type { Knex } from 'knex';
import type { Job } from 'pg-boss';
import packageJson from '../package.json' with { type: 'json' };
import type { JobQueue } from '../db/queues.ts';
import { QUEUES } from '../db/queues.ts';
import { abandonDelivery, findDelivery } from '../db/webhooks.ts';
import { DELIVERY_TURNS, LANE_PRIORITY, laneOf, laneOfJob, type DeliveryLane } from '../domain/delivery-lanes.ts';
import { moveToLane, recordWebhookAttempt, type DeliveryRules } from '../domain/webhook-deliveries.ts';
import { signPayload, SIGNATURE_HEADER } from '../sdk/webhook-signature.ts';
import type { DispatchOptions, JobDispatchers } from './job-dispatcher.ts';
import { postWebhook, type WebhookPostResult } from './webhook-post.ts';

export interface WebhookSettings extends DeliveryRules {
  allowPrivate: boolean;
}

export interface WebhookDependencies {
  db: Knex;
  jobs: JobQueue;
  settings: WebhookSettings;
  onError: (error: unknown, deliveryId: number) => void;
  /** Every attempt's result, for metrics and for the log of failed ones; `final` when no attempt follows a failure. */
  onAttempt?: (attempt: { endpointId: string; eventId: string; deliveryId: number; attempt: number; final: boolean; result: WebhookPostResult }) => void;
}

export const USER_AGENT = `Dispatch/${packageJson.version} (webhooks)`;

/**
 * One attempt of one delivery: the event as JSON, signed over exactly the bytes sent with a
 * fresh timestamp, posted with the timeout and without following redirects. `lane` is where the
 * job waited: a job in another lane than its endpoint's present one is moved there, not attempted.
 */
export async function attemptDelivery(deps: WebhookDependencies, deliveryId: number, lane: DeliveryLane): Promise<void> {
  const delivery = await findDelivery(deps.db, deliveryId);
  if (!delivery || delivery.status !== 'pending') return;
  if (!delivery.is_active || delivery.deleted_at !== null) {
    await abandonDelivery(deps.db, deliveryId);
    return;
  }
  if (laneOf(delivery) !== lane) {
    await moveToLane(deps.db, deps.jobs, delivery, laneOf(delivery));
    return;
  }
  const rawBody = JSON.stringify({
    id: delivery.event_id,
    object: 'event',
    type: delivery.type,
    created_at: new Date(delivery.event_created_at).toISOString(),
    data: delivery.data,
  });
  const headers = {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    // While a rotated-out secret is within its grace period, the delivery is signed with both.
    [SIGNATURE_HEADER]: signPayload(
      rawBody,
      [delivery.signing_secret, ...(delivery.previous_signing_secret === null ? [] : [delivery.previous_signing_secret])],
      Math.floor(Date.now() / 1000),
    ),
  };
  const result = await postWebhook(delivery.url, rawBody, headers, { timeoutMs: deps.settings.timeoutMs, allowPrivate: deps.settings.allowPrivate });
  const attempt = delivery.attempts + 1;
  deps.onAttempt?.({
    endpointId: delivery.endpoint_id,
    eventId: delivery.event_id,
    deliveryId,
    attempt,
    final: attempt >= deps.settings.retrySchedule.length,
    result,
  });
  await recordWebhookAttempt(deps.db, deps.jobs, deps.settings, deliveryId, attempt, result);
}

/**
 * Each job is one attempt, run on its own, so that no attempt waits for another. The workers take
 * turns by endpoint and then by account (DELIVERY_TURNS): an endpoint with no attempt in flight
 * goes before another endpoint's second, and an account with fewer attempts in flight first. The
 * reserved slots take only the jobs of prompt endpoints; the shared ones take any: prompt, then
 * new, then on probation. So endpoints that are new, slow or hanging hold at most the shared
 * slots (one each), each for at most WEBHOOK_TIMEOUT_MS, and never a reserved slot; an endpoint
 * that was prompt and starts to hang holds at most 4 slots for one deadline before its jobs move
 * to probation.
 */
// An attempt scheduled for later starts at its time (jobs/job-dispatcher.ts); what nobody announces
// (pg-boss's retry of an attempt whose process died, a group's cap freed by another process) is
// looked for this often by both kinds of slot: it bounds how late such a job starts.
const DUE_POLL_MS = 250;
const RESERVED: DispatchOptions = { concurrency: 16, pollMs: DUE_POLL_MS, turns: { ...DELIVERY_TURNS, minPriority: LANE_PRIORITY.prompt } };
const SHARED: DispatchOptions = { concurrency: 16, pollMs: DUE_POLL_MS, turns: DELIVERY_TURNS };

export function startWebhookWorker(dispatchers: JobDispatchers, deps: WebhookDependencies): void {
  const handle = async (job: Job<{ delivery_id: number; account_id?: string }>): Promise<void> => {
    const { delivery_id: deliveryId } = job.data;
    try {
      await attemptDelivery(deps, deliveryId, laneOfJob(job));
    } catch (error) {
      deps.onError(error, deliveryId);
      throw error;
    }
  };
  dispatchers.run(QUEUES.deliverWebhook.name, RESERVED, handle);
  dispatchers.run(QUEUES.deliverWebhook.name, SHARED, handle);
}
