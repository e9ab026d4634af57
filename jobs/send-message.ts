import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { recordAttempt } from '../db/message-attempts.ts';
import { findMessageById } from '../db/messages.ts';
import { QUEUES, type JobQueue } from '../db/queues.ts';
import { activeAccountRoutes } from '../db/routes.ts';
import { planSegments } from '../domain/encoding.ts';
import { chargeForRoute, recordAcceptance, recordFailure } from '../domain/message-outcomes.ts';
import { compare, multiply } from '../domain/money.ts';
import { routesFor } from '../domain/routing.ts';
import type { SubmitOutcome } from '../providers/index.ts';
import type { ProviderPool } from './provider-pool.ts';

export interface SendDependencies {
  db: Knex;
  jobs: JobQueue;
  providers: ProviderPool;
  /** An unexpected failure while sending; the job is retried. */
  onError: (error: unknown, messageId: string) => void;
  /** Every submission to an upstream, for metrics. */
  onSubmit?: (routeId: number, outcome: SubmitOutcome, durationMs: number) => void;
}

/**
 * Each of LOCAL_WORKERS fetches BATCH_SIZE jobs and sends them concurrently, fetching again at
 * once while batches come back full (a backlog drains without polling pauses). A hanging upstream
 * holds only the worker whose batch it is in, for at most its timeout.
 */
const BATCH_SIZE = 4;
const LOCAL_WORKERS = 8;

/**
 * Offers a pending message to its eligible routes in priority order. Accepted: sent. A hard
 * error: failed at once, no other route tried. Retryable: the next route. When every route
 * failed retryably, 'retry' (the job is retried with backoff), or failed on the last try.
 */
export async function sendMessage(deps: SendDependencies, messageId: string, lastTry: boolean): Promise<'done' | 'retry'> {
  const message = await findMessageById(deps.db, messageId);
  if (!message || message.status !== 'pending') return 'done';
  const routes = routesFor(await activeAccountRoutes(deps.db, message.account_id), message.to, message.requested_route_id);
  const { encoding, segments, parts } = planSegments(message.body);
  const outbound = { messageId: message.id, to: message.to, from: message.from, body: message.body, encoding, segments, parts };
  let lastProblem = 'no active route of the account covers this number any more.';
  let charged = message.cost;

  for (const route of routes) {
    const price = multiply(route.price_per_segment, message.segments);
    if (compare(price, charged) > 0) {
      if (!(await chargeForRoute(deps.db, message.id, price))) {
        lastProblem = `the balance does not cover the price of route ${route.id}.`;
        continue;
      }
      charged = price;
    }
    const started = performance.now();
    const outcome = await deps.providers.get(route).submit(outbound);
    const attempt = { messageId: message.id, routeId: route.id, durationMs: performance.now() - started };
    deps.onSubmit?.(route.id, outcome, attempt.durationMs);
    if (outcome.status === 'accepted') {
      await recordAcceptance(deps.db, deps.jobs, message.id, route, price, outcome.providerMessageId, attempt);
      return 'done';
    }
    const error = { type: 'provider_error' as const, code: outcome.code, message: outcome.message };
    if (outcome.status === 'rejected') {
      await recordFailure(deps.db, deps.jobs, message.id, error, { ...attempt, outcome: 'rejected', errorCode: outcome.code, errorMessage: outcome.message });
      return 'done';
    }
    await recordAttempt(deps.db, { ...attempt, outcome: 'retryable', errorCode: outcome.code, errorMessage: outcome.message });
    lastProblem = outcome.message;
  }

  if (!lastTry) return 'retry';
  await recordFailure(deps.db, deps.jobs, message.id, { type: 'provider_error', code: 'provider_unavailable', message: `No route could take the message; last: ${lastProblem}` });
  return 'done';
}

export async function startSendWorker(boss: PgBoss, deps: SendDependencies): Promise<void> {
  await boss.work(
    QUEUES.sendMessage.name,
    {
      batchSize: BATCH_SIZE,
      localConcurrency: LOCAL_WORKERS,
      burstWhenBatchFull: true,
      includeMetadata: true,
      perJobResults: true,
      // New jobs wake a worker through NOTIFY; this poll only picks up retries whose delay has passed.
      notifyPollingIntervalSeconds: 2,
    },
    (jobs) =>
      Promise.all(
        jobs.map(async (job) => {
          const { message_id: messageId } = job.data as { message_id: string };
          const outcome = await sendMessage(deps, messageId, job.retryCount >= job.retryLimit).catch((error: unknown) => {
            deps.onError(error, messageId);
            return error;
          });
          if (outcome === 'done') return { id: job.id, status: 'completed' as const };
          // pg-boss retries a failed job with backoff until its retry limit.
          return { id: job.id, status: 'failed' as const, output: { reason: outcome === 'retry' ? 'every eligible route failed with a retryable error' : String(outcome) } };
        }),
      ),
  );
}
