import type { Server } from 'node:http';
import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { connect } from '../db/connection.ts';
import { migrateLatest, migrationsCurrent } from '../db/migrate.ts';
import { jobQueueOf, startQueues, type JobQueue } from '../db/queues.ts';
import { SendGroupCommit } from '../domain/send-group-commit.ts';
import { deliveryReportCallback } from './delivery-report-callback.ts';
import { inboundCallback } from './inbound-callback.ts';
import type { AuthDependencies } from './auth.ts';
import { createApp, type ApiDependencies } from './api.ts';
import { answerClientError } from './client-error.ts';
import type { Config } from './config.ts';
import { startKeyCache } from './key-cache.ts';
import { KeyUsageRecorder } from './key-usage.ts';
import { systemClock, type Clock } from '../lib/clock.ts';
import { Metrics } from './metrics.ts';
import type { Logger } from './logger.ts';
import { KeyRateLimiter } from './rate-limit.ts';
import { startWorkers, type CountReport } from './workers.ts';

export interface Dispatch {
  db: Knex;
  boss: PgBoss;
  server: Server;
  /** `<origin>/api/v1`; a worker's server answers only its probes and metrics there. */
  baseUrl: string;
  /** Writes the key last-use times held in memory now rather than at the next interval. */
  flushKeyUsage: () => Promise<void>;
  stop: () => Promise<void>;
}

const KEY_USAGE_FLUSH_MS = 10_000;
const SHUTDOWN_GRACE_MS = 10_000;

/** What serving the API needs beyond the shared pool: authentication's caches and counters, and the send group commit. */
async function startApi(
  db: Knex,
  databaseUrl: string,
  jobs: JobQueue,
  config: Config,
  countReport: CountReport,
  publicOrigin: () => string,
  logger: Logger,
  clock: Clock,
) {
  const counters = connect(databaseUrl, 4, { durable: false });
  const keyUsage = new KeyUsageRecorder(db, KEY_USAGE_FLUSH_MS, (error) => logger.error({ err: error }, 'could not record key use'));
  keyUsage.start();
  const keyCache = await startKeyCache(db, databaseUrl, logger);
  const auth: AuthDependencies = {
    keys: keyCache.cache,
    rateLimiter: new KeyRateLimiter(counters),
    keyUsage,
    trustProxy: config.trustProxy,
    adminToken: config.adminToken,
    db,
  };
  const deps: ApiDependencies = {
    callbacks: [deliveryReportCallback(db, jobs, countReport), inboundCallback(db, jobs, logger)],
    services: {
      db,
      jobs,
      settings: { webhookAllowPrivateUrls: config.webhookAllowPrivateUrls },
      sends: new SendGroupCommit(db, jobs, clock),
      clock,
      keyLastUsed: (keyId, stored) => keyUsage.lastUsed(keyId, stored),
      // Requests arrive only once the server listens, when the origin is known.
      inboundUrl: (dlrToken) => `${publicOrigin()}/callbacks/inbound/${dlrToken}`,
      log: logger,
    },
    auth,
    publicOrigin,
  };
  return {
    deps,
    flushKeyUsage: () => keyUsage.flush(),
    stop: async () => {
      await keyUsage.stop();
      await keyCache.stop();
      await counters.destroy();
    },
  };
}

/**
 * Connects, migrates under the advisory lock, starts the queues and listens; then serves the API,
 * works the jobs, or both, as `config.role` says.
 */
export async function startDispatch(config: Config, databaseUrl: string, logger: Logger, clock: Clock = systemClock): Promise<Dispatch> {
  const db = connect(databaseUrl);
  await migrateLatest(db);
  const boss = await startQueues(databaseUrl, (error) => logger.error({ err: error }, 'job queue error'));
  // An attempt job that outlives its timeout by this much belongs to a process that died: it is retried.
  const jobs = jobQueueOf(boss, { deliverWebhook: { expireInSeconds: Math.ceil(config.webhookTimeoutMs / 1000) + 5 } });
  const metrics = new Metrics(db);
  // A report is stored before it is counted; a figure that cannot be read must not fail it.
  const countReport: CountReport = (routeId, report, recorded) =>
    void metrics
      .deliveryReport(routeId, report, recorded.sentToDeliveredSeconds)
      .catch((error: unknown) => logger.warn({ err: error, route_id: routeId }, 'could not count a delivery report'));
  /** The public base of callback URLs: known once the server listens (PORT may be 0). */
  let origin = '';
  const api = config.role === 'worker' ? undefined : await startApi(db, databaseUrl, jobs, config, countReport, () => origin, logger, clock);
  const app = await createApp(
    {
      logger,
      metrics,
      metricsToken: config.metricsToken,
      readiness: async () => {
        await db.raw('SELECT 1');
        return migrationsCurrent(db);
      },
    },
    api?.deps,
  );
  const server = await new Promise<Server>((resolve, reject) => {
    // Express 5 hands a failure to listen (a port in use) to this callback, not only to 'error'.
    const listening = app.listen(config.port, config.host, (error?: Error) => (error ? reject(error) : resolve(listening)));
    listening.on('clientError', answerClientError);
  }).catch(async (error: unknown) => {
    // What started before the server is stopped, so that the process can exit cleanly.
    await boss.stop({ graceful: false });
    await api?.stop();
    await db.destroy();
    throw error;
  });
  const { port } = server.address() as { port: number };
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  origin = config.publicUrl ?? `http://${host}:${port}`;

  // The workers start only now, when the application is complete: a send job that ran earlier
  // would build its route's provider without the public URL, and would compete with start-up
  // work that blocks the event loop.
  const workers = config.role === 'api' ? undefined : await startWorkers({ config, databaseUrl, boss, jobs, metrics, origin, countReport, logger });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Stop taking requests, let in-flight ones finish, then drain jobs and flush what is held in memory.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const grace = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(grace);
      await workers?.drain(SHUTDOWN_GRACE_MS);
      await boss.stop({ graceful: true, timeout: SHUTDOWN_GRACE_MS });
      await workers?.close();
      await api?.stop();
      await db.destroy();
    })();
    return stopping;
  };

  return { db, boss, server, baseUrl: `http://${host}:${port}/api/v1`, flushKeyUsage: async () => api?.flushKeyUsage(), stop };
}
