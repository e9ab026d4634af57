import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../app/embedded-postgres.ts';
import { createDatabase } from '../../db/databases.ts';
import { randomBase62 } from '../../domain/ids.ts';

export interface TestDatabase {
  url: string;
  name: string;
  /** Drops the database (and stops an embedded server); keeps it when `keep` is set, answering where it is. */
  dispose: (keep: boolean) => Promise<string | undefined>;
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
  const { url, drop } = await createDatabase(serverUrl, name);
  return {
    url,
    name,
    dispose: async (keep) => {
      if (keep) {
        if (!embedded) return url;
        await embedded.stop();
        return `${url} (embedded server under ${dataDir}, stopped)`;
      }
      await drop();
      if (embedded) {
        await embedded.stop();
        await rm(dataDir as string, { recursive: true, force: true });
      }
      return undefined;
    },
  };
}
