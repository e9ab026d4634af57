import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../app/embedded-postgres.ts';
import { randomBase62 } from '../../domain/ids.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database (and stops an embedded server); keeps it when `keep` is set, answering where it is. */
  dispose: (keep: boolean) => Promise<string | undefined>;
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database for one test run: on the server of DATABASE_URL when it is set, else on an
 * embedded PostgreSQL in a temporary directory (the operator contract's `npm test`).
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  let serverUrl = process.env.DATABASE_URL;
  let embedded: EmbeddedDatabase | undefined;
  let dataDir: string | undefined;
  if (!serverUrl) {
    dataDir = await mkdtemp(join(tmpdir(), 'dispatch-test-'));
    await chmod(dataDir, 0o755);
    embedded = await startEmbeddedPostgres(dataDir, () => {});
    serverUrl = embedded.url;
  }
  const name = `dispatch_test_${randomBase62(10).toLowerCase()}`;
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    dispose: async (keep) => {
      if (keep) {
        if (!embedded) return url.toString();
        await embedded.stop();
        return `${url} (embedded server under ${dataDir}, stopped)`;
      }
      await adminQuery(serverUrl, `DROP DATABASE ${name} WITH (FORCE)`);
      if (embedded) {
        await embedded.stop();
        await rm(dataDir as string, { recursive: true, force: true });
      }
      return undefined;
    },
  };
}
