import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import {
  countAttempt,
  countFailedDelivery,
  disableEndpoint,
  findDelivery,
  finishDelivery,
  insertAttempt,
  recordEndpointFailedAttempt,
  recordEndpointSuccess,
} from '../db/webhooks.ts';
import { newId } from './ids.ts';

export interface DeliveryRules {
  /** Seconds to wait before each attempt; its length is the number of attempts. */
  retrySchedule: number[];
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfter: number;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * Records one attempt of a delivery and what follows from it: a success ends the delivery and
 * resets the endpoint's count of consecutive failed deliveries; a failure schedules the next
 * attempt, or after the last one abandons the delivery and counts it against the endpoint,
 * which is disabled (its pending deliveries abandoned) at `disableAfter`. Counting deliveries,
 * not attempts, keeps a short outage during a burst from disabling an endpoint.
 */
export async function recordWebhookAttempt(db: Knex, jobs: JobQueue, rules: DeliveryRules, deliveryId: number, attempt: number, result: AttemptResult): Promise<void> {
  await db.transaction(async (trx) => {
    const delivery = await findDelivery(trx, deliveryId, true);
    // Another run of the same attempt (a job retried after its process died) already recorded it.
    if (!delivery || delivery.status !== 'pending' || delivery.attempts !== attempt - 1) return;
    await insertAttempt(trx, {
      id: newId('wha'),
      delivery_id: deliveryId,
      endpoint_id: delivery.endpoint_id,
      event_id: delivery.event_id,
      attempt,
      succeeded: result.ok,
      status_code: result.statusCode,
      error: result.error,
      duration_ms: Math.round(result.durationMs),
    });
    if (result.ok) {
      await finishDelivery(trx, deliveryId, 'succeeded', attempt);
      await recordEndpointSuccess(trx, delivery.endpoint_id);
      return;
    }
    await recordEndpointFailedAttempt(trx, delivery.endpoint_id);
    if (attempt < rules.retrySchedule.length) {
      await countAttempt(trx, deliveryId, attempt);
      await jobs.enqueue(trx, 'deliverWebhook', { delivery_id: deliveryId }, new Date(Date.now() + rules.retrySchedule[attempt] * 1000));
      return;
    }
    await finishDelivery(trx, deliveryId, 'abandoned', attempt);
    if ((await countFailedDelivery(trx, delivery.endpoint_id)) >= rules.disableAfter) await disableEndpoint(trx, delivery.endpoint_id);
  });
}
