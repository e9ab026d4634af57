import type { Server } from 'node:http';
import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { connect } from '../db/connection.ts';
import { migrateLatest, migrationsCurrent } from '../db/migrate.ts';
import { jobQueueOf, startQueues } from '../db/queues.ts';
import { receiveInboundDelivery } from '../domain/inbound-parts.ts';
import { DeliveryReportRecorder } from '../domain/delivery-report-recorder.ts';
import type { RecordedReport } from '../domain/message-outcomes.ts';
import { SendGroupCommit } from '../domain/send-group-commit.ts';
import { startWebhookWorker } from '../jobs/deliver-webhook.ts';
import { attemptReason } from '../jobs/webhook-post.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { startJobDispatchers } from '../jobs/job-dispatcher.ts';
import { startDailyPurge } from '../jobs/purge.ts';
import { startReconciler } from '../jobs/reconcile.ts';
import { startSendWorker } from '../jobs/send-message.ts';
import { startInboundReceivers } from '../jobs/inbound-receivers.ts';
import { ProviderPool } from '../jobs/provider-pool.ts';
import { deliveryReportCallback } from './delivery-report-callback.ts';
import { inboundCallback } from './inbound-callback.ts';
import type { AuthDependencies } from './auth.ts';
import { createApp } from './api.ts';
import { answerClientError } from './client-error.ts';
import type { Config } from './config.ts';
import { startKeyCache } from './key-cache.ts';
import { KeyUsageRecorder } from './key-usage.ts';
import { Metrics } from './metrics.ts';
import type { Logger } from './logger.ts';
import { KeyRateLimiter } from './rate-limit.ts';

export interface Dispatch {
  db: Knex;
  boss: PgBoss;
  server: Server;
  baseUrl: string;
  /** Writes the key last-use times held in memory now rather than at the next interval. */
  flushKeyUsage: () => Promise<void>;
  stop: () => Promise<void>;
}

const KEY_USAGE_FLUSH_MS = 10_000;
const SHUTDOWN_GRACE_MS = 10_000;
/** How soon an SMPP route created or enabled is bound to receive, sent through or not. */
const INBOUND_RECEIVERS_REFRESH_MS = 2_000;

/** Connects, migrates under the advisory lock, starts the queues and listens. */
export async function startDispatch(config: Config, databaseUrl: string, logger: Logger): Promise<Dispatch> {
  const db = connect(databaseUrl);
  // The workers have a pool of their own: a burst of background work (a backlog after a restart,
  // many slow upstreams) waits on its own connections and never starves the API's requests.
  const workDb = connect(databaseUrl);
  const counters = connect(databaseUrl, 4, { durable: false });
  await migrateLatest(db);
  const boss = await startQueues(databaseUrl, (error) => logger.error({ err: error }, 'job queue error'));
  // An attempt job that outlives its timeout by this much belongs to a process that died: it is retried.
  const jobs = jobQueueOf(boss, { deliverWebhook: { expireInSeconds: Math.ceil(config.webhookTimeoutMs / 1000) + 5 } });
  const metrics = new Metrics(db);
  // A report is stored before it is counted; a figure that cannot be read must not fail it.
  const countReport = (routeId: number, report: DeliveryReport, recorded: RecordedReport) =>
    void metrics.deliveryReport(routeId, report, recorded.sentToDeliveredSeconds).catch((error: unknown) => logger.warn({ err: error, route_id: routeId }, 'could not count a delivery report'));
  const keyUsage = new KeyUsageRecorder(db, KEY_USAGE_FLUSH_MS, (error) => logger.error({ err: error }, 'could not record key use'));
  keyUsage.start();
  const keyCache = await startKeyCache(db, databaseUrl, logger);
  const auth: AuthDependencies = {
    keys: keyCache.cache,
    rateLimiter: new KeyRateLimiter(counters),
    keyUsage,
    trustProxy: config.trustProxy,
    adminToken: config.adminToken,
  };
  /** The public base of callback URLs: known once the server listens (PORT may be 0). */
  let origin = '';
  const app = await createApp({
    callbacks: [deliveryReportCallback(db, jobs, countReport), inboundCallback(db, jobs, logger)],
    services: {
      db,
      jobs,
      settings: { webhookAllowPrivateUrls: config.webhookAllowPrivateUrls },
      sends: new SendGroupCommit(db, jobs),
      keyLastUsed: (keyId, stored) => keyUsage.lastUsed(keyId, stored),
      // Requests arrive only once the server listens, when the origin is known.
      inboundUrl: (dlrToken) => `${origin}/callbacks/inbound/${dlrToken}`,
      log: logger,
    },
    auth,
    logger,
    metrics,
    metricsToken: config.metricsToken,
    readiness: async () => {
      await db.raw('SELECT 1');
      return migrationsCurrent(db);
    },
    publicOrigin: () => origin,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(config.port, config.host, () => resolve(listening));
    listening.once('error', reject);
    listening.on('clientError', answerClientError);
  });
  const { port } = server.address() as { port: number };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  origin = config.publicUrl ?? `http://${host}:${port}`;

  // The workers start only now, when the application is complete: a send job that ran earlier
  // would build its route's provider without the public URL, and would compete with start-up
  // work that blocks the event loop.
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
        logger.warn({ route_id: route.id, route: route.name, message_id: messageId, outcome: outcome.status, code: outcome.code, reason: outcome.message }, 'upstream submission failed');
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
          { endpoint_id: endpointId, event_id: eventId, delivery_id: deliveryId, attempt, outcome: final ? 'abandoned' : 'will_retry', reason, status_code: result.statusCode, error: result.error },
          'webhook attempt failed',
        );
      }
    },
  });
  await startDailyPurge(boss, workDb);
  await startReconciler(boss, {
    db: workDb,
    jobs,
    webhookRules: { retrySchedule: config.webhookRetrySchedule, disableAfter: config.webhookDisableAfter },
    inboundPartTimeoutSeconds: config.inboundPartTimeoutSeconds,
    onReconciled: (counts) => logger.warn(counts, 'settled work that no live job would have moved'),
  });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Stop taking requests, let in-flight ones finish, then drain jobs and flush what is held in memory.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(grace);
      await dispatchers.stop(SHUTDOWN_GRACE_MS);
      await boss.stop({ graceful: true, timeout: SHUTDOWN_GRACE_MS });
      stopInboundReceivers();
      await providers.close();
      await keyUsage.stop();
      await keyCache.stop();
      await Promise.all([db.destroy(), workDb.destroy(), counters.destroy()]);
    })();
    return stopping;
  };

  return { db, boss, server, baseUrl: `http://${host}:${port}/api/v1`, flushKeyUsage: () => keyUsage.flush(), stop };
}
