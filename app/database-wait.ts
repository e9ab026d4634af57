import pg from 'pg';
import type { Logger } from './logger.ts';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5_000;

const reason = (error: unknown) => (error instanceof Error ? error.message || error.name : String(error));

/**
 * At start, a database that is not up yet (a container started alongside, a failover) is waited
 * for rather than taken for a fatal error: connection attempts every 0.5 s doubling to 5 s, for
 * at most `timeoutSeconds`. Says so in one line when the first attempt fails, and in one more if
 * it gives up; answers whether the database answered.
 */
export async function waitForDatabase(databaseUrl: string, timeoutSeconds: number, logger: Logger): Promise<boolean> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  let delay = FIRST_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    // A connection that fails after connecting (the server going away) must not throw unhandled.
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      if (attempt > 1) logger.info({ attempts: attempt }, 'database reachable');
      return true;
    } catch (error) {
      if (Date.now() + delay > deadline) {
        logger.error(
          { error: reason(error), attempts: attempt, timeout_seconds: timeoutSeconds },
          'database unreachable: giving up (DATABASE_CONNECT_TIMEOUT_SECONDS)',
        );
        return false;
      }
      if (attempt === 1) logger.warn({ error: reason(error), retry_for_seconds: timeoutSeconds }, 'database unreachable: retrying with backoff');
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}
