import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import packageJson from '../package.json' with { type: 'json' };
import type { JobQueue } from '../db/queues.ts';
import { QUEUES } from '../db/queues.ts';
import { abandonDelivery, findDelivery } from '../db/webhooks.ts';
import { recordWebhookAttempt, type DeliveryRules } from '../domain/webhook-deliveries.ts';
import { signPayload, SIGNATURE_HEADER } from '../domain/webhook-signature.ts';
import { postWebhook } from './webhook-post.ts';

export interface WebhookSettings extends DeliveryRules {
  timeoutMs: number;
  allowPrivate: boolean;
}

export interface WebhookDependencies {
  db: Knex;
  jobs: JobQueue;
  settings: WebhookSettings;
  onError: (error: unknown, deliveryId: number) => void;
  /** Every attempt's result, for metrics. */
  onAttempt?: (ok: boolean) => void;
}

export const USER_AGENT = `Dispatch/${packageJson.version} (webhooks)`;

/**
 * One attempt of one delivery: the event as JSON, signed over exactly the bytes sent with a
 * fresh timestamp, posted with the timeout and without following redirects.
 */
export async function attemptDelivery(deps: WebhookDependencies, deliveryId: number): Promise<void> {
  const delivery = await findDelivery(deps.db, deliveryId);
  if (!delivery || delivery.status !== 'pending') return;
  if (!delivery.is_active || delivery.deleted_at !== null) {
    await abandonDelivery(deps.db, deliveryId);
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
    [SIGNATURE_HEADER]: signPayload(rawBody, delivery.signing_secret, Math.floor(Date.now() / 1000)),
  };
  const result = await postWebhook(delivery.url, rawBody, headers, { timeoutMs: deps.settings.timeoutMs, allowPrivate: deps.settings.allowPrivate });
  deps.onAttempt?.(result.ok);
  await recordWebhookAttempt(deps.db, deps.jobs, deps.settings, deliveryId, delivery.attempts + 1, result);
}

/** Small concurrent batches per worker, as for sends: a hanging endpoint holds one worker for at most the timeout. */
const BATCH_SIZE = 4;
const LOCAL_WORKERS = 8;

export async function startWebhookWorker(boss: PgBoss, deps: WebhookDependencies): Promise<void> {
  await boss.work(
    QUEUES.deliverWebhook.name,
    { batchSize: BATCH_SIZE, localConcurrency: LOCAL_WORKERS, burstWhenBatchFull: true, perJobResults: true, pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1 },
    (jobs) =>
      Promise.all(
        jobs.map(async (job) => {
          const { delivery_id: deliveryId } = job.data as { delivery_id: number };
          try {
            await attemptDelivery(deps, deliveryId);
            return { id: job.id, status: 'completed' as const };
          } catch (error) {
            deps.onError(error, deliveryId);
            return { id: job.id, status: 'failed' as const, output: { reason: String(error) } };
          }
        }),
      ),
  );
}
