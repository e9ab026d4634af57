import { join } from 'node:path';
import type pg from 'pg';
import type { DispatchProcess, DispatchProcesses } from './dispatch.ts';
import type { LoadJob, LoadResult } from './load/job.ts';
import { runLoad } from './load.ts';
import { pendingCount } from './message-log.ts';
import type { Options } from './options.ts';
import type { Admin, Tenant } from './tenant.ts';
import type { Upstream } from './upstream.ts';

/** One line of the printed table. `pass` is undefined when the target was not measured. */
export interface Row {
  target: string;
  what: string;
  measured: string;
  baseline: string;
  ratio: string;
  goal: string;
  pass: boolean | undefined;
}

export interface Measurement {
  rows: Row[];
  /** The raw figures, for results.json. */
  figures: Record<string, unknown>;
}

const SETTLE_TIMEOUT_MS = 180_000;

/** What every measurement works with: the running processes, the database and the admin API. */
export class Bench {
  readonly options: Options;
  /** The processes serving the API, behind the load generator. */
  readonly dispatch: DispatchProcess[];
  /** The processes working the jobs only (none when the API processes work them too). */
  readonly workers: DispatchProcess[];
  readonly upstream: Upstream;
  readonly admin: Admin;
  readonly pool: pg.Pool;
  /** The run's database, as Dispatch and pgbench reach it. */
  readonly databaseUrl: string;
  readonly routeId: number;
  readonly runDir: string;
  /** Per send reference: accepted answers, requests cut unanswered, and the file of the accepted ids, for the totals check. */
  readonly sends = new Map<string, { accepted: number; unanswered: number; idsFile?: string }>();

  constructor(fields: {
    options: Options;
    dispatch: DispatchProcesses;
    upstream: Upstream;
    admin: Admin;
    pool: pg.Pool;
    databaseUrl: string;
    routeId: number;
    runDir: string;
  }) {
    this.options = fields.options;
    this.dispatch = fields.dispatch.api;
    this.workers = fields.dispatch.workers;
    this.upstream = fields.upstream;
    this.admin = fields.admin;
    this.pool = fields.pool;
    this.databaseUrl = fields.databaseUrl;
    this.routeId = fields.routeId;
    this.runDir = fields.runDir;
  }

  /** Every Dispatch process, of either role. */
  get processes(): DispatchProcess[] {
    return [...this.dispatch, ...this.workers];
  }

  /** How many processes of each role, for the table. */
  describeProcesses(): string {
    const plural = (n: number, what: string) => `${n} ${what} process${n === 1 ? '' : 'es'}`;
    return this.workers.length === 0
      ? plural(this.dispatch.length, 'API and worker')
      : `${plural(this.dispatch.length, 'API')}, ${plural(this.workers.length, 'worker')}`;
  }

  /** An API path (under /api/v1) on every process serving the API. */
  apiUrls(path: string): string[] {
    return this.dispatch.map((instance) => `${instance.baseUrl}${path}`);
  }

  /** A path outside the API (such as /healthz) on every process serving the API. */
  rootUrls(path: string): string[] {
    return this.dispatch.map((instance) => `${instance.origin}${path}`);
  }

  tenant(name: string, keys = 50): Promise<Tenant> {
    return this.admin.createTenant(name, this.routeId, keys);
  }

  /** POST /messages/send under `reference`, keeping the accepted ids for the totals check. */
  async send(
    tenant: Pick<Tenant, 'keys' | 'from'>,
    reference: string,
    job: Pick<LoadJob, 'connections' | 'durationSeconds'> & Partial<LoadJob>,
  ): Promise<LoadResult> {
    const idsFile = join(this.runDir, `accepted-${reference}.txt`);
    const result = await runLoad({
      urls: this.apiUrls('/messages/send'),
      method: 'POST',
      keys: tenant.keys,
      send: { from: tenant.from, reference },
      idsFile,
      ...job,
    });
    this.sends.set(reference, { accepted: result.ok, unanswered: result.unanswered, idsFile });
    return result;
  }

  /** Waits until no message is pending and the upstream has no report left to post, so that one measurement does not load the next. */
  settle(): Promise<{ settled: boolean; ms: number }> {
    return waitUntilSettled(async () => {
      const [pending, stats] = await Promise.all([pendingCount(this.pool), this.upstream.stats()]);
      return pending === 0 && stats.reportsWaiting === 0 ? undefined : `${pending} pending, ${stats.reportsWaiting} reports waiting`;
    });
  }
}

/** Polls `unsettled` (what is left, or undefined once nothing is) until nothing is left or SETTLE_TIMEOUT_MS passes. */
export async function waitUntilSettled(unsettled: () => Promise<string | undefined>): Promise<{ settled: boolean; ms: number }> {
  const started = Date.now();
  for (;;) {
    const left = await unsettled();
    if (left === undefined) return { settled: true, ms: Date.now() - started };
    if (Date.now() - started > SETTLE_TIMEOUT_MS) {
      log(`  not settled after ${SETTLE_TIMEOUT_MS / 1000} s: ${left}`);
      return { settled: false, ms: Date.now() - started };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const started = Date.now();
export const log = (line: string): void => void process.stderr.write(`[bench ${String(Math.round((Date.now() - started) / 1000)).padStart(4)} s] ${line}\n`);
