import type { Knex } from 'knex';
import { loadConfig } from '../../app/config.ts';
import { createLogger, type Logger } from '../../app/logger.ts';
import { startDispatch, type Dispatch } from '../../app/server.ts';
import { connect } from '../../db/connection.ts';
import { SettableClock } from './clock.ts';
import type { TestDatabase } from './database.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The running service and its database, shared by every test of the run (tests isolate by account). */
export const harness = {} as { database: TestDatabase; dispatch: Dispatch; baseUrl: string; db: Knex; clock: SettableClock };

/**
 * Webhook settings every instance of the run shares (all of them work the same queues): three
 * attempts one second apart and a one-second timeout, so that retries finish within a test.
 */
export const TEST_WEBHOOK_ENV = { WEBHOOK_RETRY_SCHEDULE: '0,1,1', WEBHOOK_TIMEOUT_MS: '1000' };

/** Starts a Dispatch process in this test process, on a free port, against the run's database. */
export async function startInstance(databaseUrl: string, env: Record<string, string> = {}, logger?: Logger, clock?: SettableClock): Promise<Dispatch> {
  const config = loadConfig({
    PORT: '0',
    ADMIN_TOKEN,
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    ...TEST_WEBHOOK_ENV,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ...env,
    DATABASE_URL: databaseUrl,
  });
  return startDispatch(config, databaseUrl, logger ?? createLogger(config.logLevel), clock?.now);
}

export async function startHarness(database: TestDatabase): Promise<void> {
  harness.database = database;
  harness.clock = new SettableClock();
  harness.dispatch = await startInstance(database.url, {}, undefined, harness.clock);
  harness.baseUrl = harness.dispatch.baseUrl;
  harness.db = connect(database.url, 4);
}

export async function stopHarness(): Promise<void> {
  await harness.db?.destroy();
  await harness.dispatch?.stop();
}
