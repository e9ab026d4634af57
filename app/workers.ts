import type { PgBoss } from 'pg-boss';
import { connect } from '../db/connection.ts';
import type { JobQueue } from '../db/queues.ts';
import { receiveInboundDelivery } from '../domain/inbound-parts.ts';
import { DeliveryReportRecorder } from '../domain/delivery-report-recorder.ts';
import type { RecordedReport } from '../domain/message-outcomes.ts';
import { startWebhookWorker } from '../jobs/deliver-webhook.ts';
import { attemptReason } from '../jobs/webhook-post.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { startJobDispatchers } from '../jobs/job-dispatcher.ts';
import { startStatsFold } from '../jobs/fold-stats.ts';
import { startDailyPurge } from '../jobs/purge.ts';
import { startReconciler } from '../jobs/reconcile.ts';
import { startSendWorker } from '../jobs/send-message.ts';
import { startInboundReceivers } from '../jobs/inbound-receivers.ts';
import { ProviderPool } from '../jobs/provider-pool.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

/** How soon an SMPP route created or enabled is bound to receive, sent through or not. */
const INBOUND_RECEIVERS_REFRESH_MS = 2_000;

/** Counts a delivery report in this process's metrics, once it is stored. */
export type CountReport = (routeId: number, report: DeliveryReport, recorded: RecordedReport) => void;

export interface WorkerDependencies {
  config: Config;
  databaseUrl: string;
  boss: PgBoss;
  jobs: JobQueue;
  metrics: Metrics;
  /** The public base of the callback URLs handed to providers: the API's, wherever it runs. */
  origin: string;
  countReport: CountReport;
  logger: Logger;
}

export interface Workers {
  /** Takes no new job and waits for the running ones, at most `graceMs`. */
  drain: (graceMs: number) => Promise<void>;
  /** Unbinds the providers and closes the workers' pool, once pg-boss has stopped. */
  close: () => Promise<void>;
}

/**
 * The background work of a process: send and webhook jobs, delivery reports and inbound messages
 * that arrive over provider connections (SMPP binds), the daily purge and the reconciler. They
 * have a pool of their own: a burst of background work (a backlog after a restart, many slow
 * upstreams) waits on its own connections and never starves the API's requests.
 */
export async function startWorkers({ config, databaseUrl, boss, jobs, metrics, origin, countReport, logger }: WorkerDependencies): Promise<Workers> {
  const workDb = connect(databaseUrl);
  const upstreamReports = new DeliveryReportRecorder(workDb, jobs);
  const providers = new ProviderPool(
    origin,
    {
      onReport: async (routeId, report) => {
        countReport(routeId, report, await upstreamReports.record(routeId, report));
      },
      onInbound: (routeId, message) => receiveInboundDelivery(workDb, jobs, routeId, message, logger),
    },
    logger.child({ component: 'provider' }),
  );
  const stopInboundReceivers = startInboundReceivers(workDb, providers, INBOUND_RECEIVERS_REFRESH_MS, (error) =>
    logger.error({ err: error }, 'could not read the routes to bind for inbound messages; retrying'),
  );
  const dispatchers = await startJobDispatchers(boss, databaseUrl, (error) => logger.error({ err: error }, 'job queue error'));
  startSendWorker(dispatchers, {
    db: workDb,
    jobs,
    providers,
    onError: (error, messageId) => logger.error({ err: error, message_id: messageId }, 'send failed unexpectedly; the job will be retried'),
    onFailed: (messageId, error) => logger.warn({ message_id: messageId, code: error.code, reason: error.message }, 'message failed and was refunded'),
    onSubmit: (route, messageId, outcome, durationMs) => {
      metrics.submission(route, outcome, durationMs);
      if (outcome.status !== 'accepted') {
        logger.warn(
          { route_id: route.id, route: route.name, message_id: messageId, outcome: outcome.status, code: outcome.code, reason: outcome.message },
          'upstream submission failed',
        );
      }
    },
  });
  startWebhookWorker(dispatchers, {
    db: workDb,
    jobs,
    settings: {
      retrySchedule: config.webhookRetrySchedule,
      disableAfter: config.webhookDisableAfter,
      timeoutMs: config.webhookTimeoutMs,
      allowPrivate: config.webhookAllowPrivateUrls,
    },
    onError: (error, deliveryId) => logger.error({ err: error, delivery_id: deliveryId }, 'webhook attempt failed unexpectedly; the job will be retried'),
    onAttempt: ({ endpointId, eventId, deliveryId, attempt, final, result }) => {
      const reason = attemptReason(result);
      metrics.webhookAttempt(reason);
      if (!result.ok) {
        logger.warn(
          {
            endpoint_id: endpointId,
            event_id: eventId,
            delivery_id: deliveryId,
            attempt,
            outcome: final ? 'abandoned' : 'will_retry',
            reason,
            status_code: result.statusCode,
            error: result.error,
          },
          'webhook attempt failed',
        );
      }
    },
  });
  await startDailyPurge(boss, workDb);
  await startStatsFold(boss, workDb);
  await startReconciler(boss, {
    db: workDb,
    jobs,
    webhookRules: { retrySchedule: config.webhookRetrySchedule, disableAfter: config.webhookDisableAfter },
    inboundPartTimeoutSeconds: config.inboundPartTimeoutSeconds,
    onReconciled: (counts) => logger.warn(counts, 'settled work that no live job would have moved'),
  });

  return {
    drain: (graceMs) => dispatchers.stop(graceMs),
    close: async () => {
      stopInboundReceivers();
      await providers.close();
      await workDb.destroy();
    },
  };
}
