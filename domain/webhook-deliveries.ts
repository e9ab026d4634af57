import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import {
  countAttempt,
  countFailedDelivery,
  disableEndpoint,
  findDelivery,
  finishDelivery,
  insertAttempt,
  isStranded,
  recordEndpointAttempt,
  strandedDeliveryIds,
  type DeliveryRow,
  type EndpointRow,
} from '../db/webhooks.ts';
import { laneJobOptions, laneOf, type DeliveryLane } from './delivery-lanes.ts';
import { newId } from './ids.ts';

export interface DeliveryRules {
  /** Seconds to wait before each attempt; its length is the number of attempts. */
  retrySchedule: number[];
  /** Consecutive failed deliveries after which an endpoint is disabled. */
  disableAfter: number;
  /** The acknowledgement deadline of one attempt; an attempt that took more than half of it is slow. */
  timeoutMs: number;
}

export interface AttemptResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

type Delivery = Pick<DeliveryRow, 'id' | 'endpoint_id'> & Pick<EndpointRow, 'account_id'>;

/** A delivery's job names its account, by which the workers take turns (domain/delivery-lanes.ts). */
export const deliveryJob = (delivery: Delivery) => ({ delivery_id: delivery.id, account_id: delivery.account_id });

async function enqueueAttempt(trx: Knex.Transaction, jobs: JobQueue, delivery: Delivery, lane: DeliveryLane, startAfter?: Date): Promise<void> {
  await jobs.enqueue(trx, 'deliverWebhook', deliveryJob(delivery), { ...laneJobOptions(delivery.endpoint_id, lane), ...(startAfter && { startAfter }) });
}

/** The delivery ends unsuccessful and counts against its endpoint, which is disabled at `disableAfter`. */
async function abandonAndCount(trx: Knex.Transaction, rules: Pick<DeliveryRules, 'disableAfter'>, delivery: Delivery, attempts: number): Promise<void> {
  await finishDelivery(trx, delivery.id, 'abandoned', attempts);
  if ((await countFailedDelivery(trx, delivery.endpoint_id)) >= rules.disableAfter) await disableEndpoint(trx, delivery.endpoint_id);
}

/**
 * Records one attempt of a delivery and what follows from it: a success ends the delivery and
 * resets the endpoint's count of consecutive failed deliveries; a failure schedules the next
 * attempt, or after the last one abandons the delivery and counts it against the endpoint,
 * which is disabled (its pending deliveries abandoned) at `disableAfter`. Counting deliveries,
 * not attempts, keeps a short outage during a burst from disabling an endpoint.
 */
export async function recordWebhookAttempt(
  db: Knex,
  jobs: JobQueue,
  rules: DeliveryRules,
  deliveryId: number,
  attempt: number,
  result: AttemptResult,
): Promise<void> {
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
    const standing = await recordEndpointAttempt(trx, delivery.endpoint_id, { succeeded: result.ok, prompt: result.durationMs <= rules.timeoutMs / 2 });
    if (result.ok) {
      await finishDelivery(trx, deliveryId, 'succeeded', attempt);
      return;
    }
    if (attempt < rules.retrySchedule.length) {
      await countAttempt(trx, deliveryId, attempt);
      await enqueueAttempt(trx, jobs, delivery, laneOf(standing), new Date(Date.now() + rules.retrySchedule[attempt] * 1000));
      return;
    }
    await abandonAndCount(trx, rules, delivery, attempt);
  });
}

/**
 * A job that waited in another lane than its endpoint's present one gives its place up
 * unattempted: the delivery waits again in the endpoint's lane. So an endpoint that starts to
 * hang holds the reserved workers for one deadline, not for every job it had queued; and one that
 * has answered promptly again gets its queued jobs back to a few at a time.
 */
export async function moveToLane(db: Knex, jobs: JobQueue, delivery: Delivery, lane: DeliveryLane): Promise<void> {
  await db.transaction((trx) => enqueueAttempt(trx, jobs, delivery, lane));
}

/** A delivery younger than this is never taken for stranded: its job is written with it, but give commits and clocks room. */
const STRANDED_AFTER_MS = 30_000;

/**
 * Settles, by the delivery rules, every pending delivery that no live job will move (its job
 * exhausted pg-boss's retries during a database outage, or was lost): it gets its next attempt
 * when the schedule has attempts left, or else is abandoned and counted against its endpoint.
 * Each is locked and checked again first, so a delivery whose job appeared meanwhile is left alone.
 */
export async function reconcileWebhookDeliveries(
  db: Knex,
  jobs: JobQueue,
  rules: Pick<DeliveryRules, 'retrySchedule' | 'disableAfter'>,
  now = new Date(),
): Promise<{ requeued: number; abandoned: number }> {
  const settled = { requeued: 0, abandoned: 0 };
  for (const id of await strandedDeliveryIds(db, new Date(now.getTime() - STRANDED_AFTER_MS))) {
    const outcome = await db.transaction(async (trx) => {
      const delivery = await findDelivery(trx, id, true);
      if (!delivery || !(await isStranded(trx, id))) return undefined;
      if (delivery.attempts < rules.retrySchedule.length) {
        await enqueueAttempt(trx, jobs, delivery, laneOf(delivery));
        return 'requeued';
      }
      await abandonAndCount(trx, rules, delivery, delivery.attempts);
      return 'abandoned';
    });
    if (outcome) settled[outcome] += 1;
  }
  return settled;
}
