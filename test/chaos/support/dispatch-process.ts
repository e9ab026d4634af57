import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { freePort } from '../../../app/free-port.ts';
import { ADMIN_TOKEN } from '../../support/harness.ts';
import { eventually } from './eventually.ts';

/** Where each Dispatch process's output is kept (gitignored), so that a failed run can be read afterwards. */
export const ARTIFACTS = resolve('test-artifacts', 'chaos');

/**
 * Webhook settings for chaos runs: six attempts on a schedule short enough to finish within a
 * test (the documented default spans 14 hours), and a deadline long enough for a loaded machine.
 */
export const CHAOS_WEBHOOK_ENV = { WEBHOOK_RETRY_SCHEDULE: '0,1,2,4,8,15', WEBHOOK_TIMEOUT_MS: '2000' };

export interface DispatchProcessOptions {
  databaseUrl: string;
  /** Names the log file: test-artifacts/chaos/<name>-<time>.log. */
  name: string;
  env?: Record<string, string>;
}

/**
 * Dispatch as a real OS process (`node app/main.ts` on this Node, which npx makes Node 24), so
 * that it can be killed with SIGKILL and started again on the same port and database, as a
 * supervisor would. The port stays the same across restarts because providers hold delivery-
 * report URLs built from PUBLIC_URL.
 */
export class DispatchProcess {
  readonly port: number;
  readonly logFile: string;
  #options: DispatchProcessOptions;
  #child: ChildProcess | undefined;
  #log: WriteStream;
  #exited: Promise<void> = Promise.resolve();

  private constructor(options: DispatchProcessOptions, port: number, logFile: string) {
    this.#options = options;
    this.port = port;
    this.logFile = logFile;
    this.#log = createWriteStream(logFile, { flags: 'a' });
  }

  static async start(options: DispatchProcessOptions): Promise<DispatchProcess> {
    await mkdir(ARTIFACTS, { recursive: true });
    const logFile = join(ARTIFACTS, `${options.name}-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
    const dispatch = new DispatchProcess(options, await freePort(), logFile);
    await dispatch.restart();
    return dispatch;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The API's base URL, for the test client. */
  get baseUrl(): string {
    return `${this.origin}/api/v1`;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Whether the current process is still alive (it did not crash on its own). */
  get running(): boolean {
    return this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts a process (again) and resolves once GET /readyz answers 200. */
  async restart(): Promise<void> {
    if (this.running) throw new Error('DispatchProcess.restart: the previous process is still running');
    const env: Record<string, string | undefined> = {
      ...process.env,
      ...CHAOS_WEBHOOK_ENV,
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'info',
      ...this.#options.env,
      DATABASE_URL: this.#options.databaseUrl,
      HOST: '127.0.0.1',
      PORT: String(this.port),
      PUBLIC_URL: this.origin,
      ADMIN_TOKEN,
    };
    this.#log.write(`\n===== ${new Date().toISOString()} starting Dispatch on port ${this.port} =====\n`);
    const child = spawn(process.execPath, ['app/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.pipe(this.#log, { end: false });
    child.stderr.pipe(this.#log, { end: false });
    this.#child = child;
    this.#exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        this.#log.write(`\n===== ${new Date().toISOString()} Dispatch (pid ${child.pid}) exited: ${signal ?? `code ${code}`} =====\n`);
        done();
      }),
    );
    await this.#waitUntilReady();
  }

  /** kill -9: no shutdown hook runs, in-flight requests and jobs are cut where they are. */
  async kill(): Promise<void> {
    if (!this.running) return;
    this.#child?.kill('SIGKILL');
    await this.#exited;
  }

  /** SIGTERM, and SIGKILL when it has not exited within `graceMs`; then closes the log. */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.running) {
      this.#child?.kill('SIGTERM');
      const timer = setTimeout(() => this.#child?.kill('SIGKILL'), graceMs);
      await this.#exited;
      clearTimeout(timer);
    }
    if (!this.#log.writableEnded) await new Promise<void>((done) => this.#log.end(done));
  }

  /** The end of the process's output, for a failure message. */
  async logTail(lines = 30): Promise<string> {
    const text = await readFile(this.logFile, 'utf8').catch(() => '');
    return `${text.split('\n').slice(-lines).join('\n')}\n(whole log: ${this.logFile})`;
  }

  async #waitUntilReady(timeoutMs = 90_000): Promise<void> {
    await eventually(
      'Dispatch answering 200 on /readyz',
      timeoutMs,
      async () => {
        if (!this.running) throw new Error(`Dispatch exited before it was ready:\n${await this.logTail()}`);
        const status = await fetch(`${this.origin}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
          (response) => response.status,
          () => 0,
        );
        return { done: status === 200, detail: `last: ${status || 'no answer'} (log: ${this.logFile})` };
      },
      100,
    );
  }
}
