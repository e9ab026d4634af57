import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SERVER_SETTINGS, startEmbeddedPostgres } from '../../app/embedded-postgres.ts';
import { createDatabase } from '../../db/databases.ts';
import { randomBase62 } from '../../domain/ids.ts';

export type BenchDatabase = Awaited<ReturnType<typeof startDatabase>>;
/** About a gigabyte: more than the loads before the first seed write; the seeds' checkpoints recycle their own. */
const WARM_WAL_SEGMENTS = 64;

/**
 * A fresh database: an embedded PostgreSQL in a temporary directory, reached over its Unix socket as
 * `npm start` does, so that the load never lands on a shared server; or one on `serverUrl`'s server.
 */
export async function startDatabase(serverUrl: string | undefined): Promise<{ url: string; where: string; stop: () => Promise<void> }> {
  if (serverUrl) {
    const name = `dispatch_bench_${randomBase62(8).toLowerCase()}`;
    const { url, drop } = await createDatabase(serverUrl, name);
    return { url, where: `database ${name} on DATABASE_URL's server`, stop: drop };
  }
  const dataDir = await mkdtemp(join(tmpdir(), 'dispatch-bench-db-'));
  await chmod(dataDir, 0o755);
  const embedded = await startEmbeddedPostgres(dataDir, () => {});
  await recycleWalSegments(embedded.socketUrl);
  const settings = `default settings but ${SERVER_SETTINGS.join(', ')}, ${WARM_WAL_SEGMENTS} WAL segments recycled ahead of the load`;
  return {
    url: embedded.socketUrl,
    where: `embedded PostgreSQL (embedded-postgres package), ${settings}, over its Unix socket`,
    stop: () => embedded.stop().then(() => rm(dataDir, { recursive: true, force: true })),
  };
}

/**
 * A fresh cluster has no old WAL segments to rename, so every 16 MB the load writes would wait for a
 * new file to be zero-filled. A switch needs WAL written since the last one: each writes a record.
 */
async function recycleWalSegments(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (let n = 0; n < WARM_WAL_SEGMENTS; n++) await client.query("SELECT pg_logical_emit_message(false, 'dispatch-bench', 'warm-up'), pg_switch_wal()");
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}
