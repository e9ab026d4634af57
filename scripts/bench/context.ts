import { join } from 'node:path';
import type pg from 'pg';
import { runLoad, type LoadJob } from './load.ts';
import { pendingCount } from './message-log.ts';
import type { Options } from './options.ts';
import type { DispatchProcesses, Upstream } from './processes.ts';
import { log } from './report.ts';

export type Bench = Awaited<ReturnType<typeof createBench>>;
type Setup = { options: Options; dispatch: DispatchProcesses; upstream: Upstream; pool: pg.Pool; databaseUrl: string; adminToken: string; runDir: string };
/** An account with an approved sender `from` and plain API keys with every scope. */
export type Tenant = { accountId: string; keys: string[]; from: string };

/**
 * What every measurement works with: the running processes, the database, and the accounts it sets up
 * through Dispatch's own admin API, as an operator would, on a route to the fake upstream.
 */
export async function createBench(setup: Setup) {
  const { dispatch, upstream, pool, adminToken } = setup;
  const apiUrls = (path: string) => dispatch.api.map((instance) => `${instance.baseUrl}${path}`);
  const call = async <T>(method: string, path: string, body?: object, token = adminToken): Promise<T> => {
    const headers = { authorization: `Bearer ${token}`, ...(body && { 'content-type': 'application/json' }) };
    const response = await fetch(apiUrls(path)[0], { method, headers, body: body && JSON.stringify(body) });
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { data: T }).data;
  };
  const createKeys = (accountId: string, count: number, limits: { rate_limit?: number; daily_limit?: number; monthly_limit?: number } = {}) => {
    const key = (i: number) =>
      call<{ id: string; plain_key: string }>('POST', `/admin/accounts/${accountId}/api-keys`, { name: `bench ${i}`, rate_limit: 6000, ...limits });
    return Promise.all(Array.from({ length: count }, (_, i) => key(i)));
  };
  const route = { name: 'bench upstream', provider: 'http', config: { url: upstream.submitUrl }, price_per_segment: 0.001 };
  const routeId = (await call<{ id: number }>('POST', '/admin/routes', route)).id;
  /** Per send reference: accepted answers, requests cut unanswered at a deadline, and the file of the accepted ids, for the totals. */
  const sends = new Map<string, { accepted: number; unanswered: number; idsFile?: string }>();
  return {
    ...setup,
    routeId,
    sends,
    apiUrls,
    /** A call of Dispatch's API, as the admin or with a key given as `token`; answers its `data`. */
    call,
    createKeys,
    /** A large balance, the route, and `keyCount` keys with a rate limit of 6,000 a minute. */
    async tenant(name: string, keyCount = 50): Promise<Tenant> {
      const account = await call<{ id: string }>('POST', '/admin/accounts', { email: `${name}@bench.example.com`, name, balance: 100_000_000 });
      await call('PUT', `/admin/accounts/${account.id}/routes/${routeId}`, { priority: 0 });
      const keys = await createKeys(account.id, keyCount);
      const sender = await call<{ id: string }>('POST', '/senders/create', { sender_id: 'Bench' }, keys[0].plain_key);
      await call('POST', `/admin/senders/${sender.id}/approve`);
      return { accountId: account.id, keys: keys.map((key) => key.plain_key), from: 'Bench' };
    },
    /** POST /messages/send under `reference`. */
    async send(tenant: Pick<Tenant, 'keys' | 'from'>, reference: string, job: Pick<LoadJob, 'connections' | 'durationSeconds'> & Partial<LoadJob>) {
      const idsFile = join(setup.runDir, `accepted-${reference}.txt`);
      const send = { from: tenant.from, reference };
      const result = await runLoad({ urls: apiUrls('/messages/send'), method: 'POST', keys: tenant.keys, send, idsFile, ...job });
      sends.set(reference, { accepted: result.ok, unanswered: result.unanswered, idsFile });
      return result;
    },
    /** Until no message is pending and the upstream has no report left to post, so that one load does not weigh on the next. */
    settle: () =>
      waitUntilSettled(async () => {
        const [pending, stats] = await Promise.all([pendingCount(pool), upstream.stats()]);
        return pending === 0 && stats.reportsWaiting === 0 ? undefined : `${pending} pending, ${stats.reportsWaiting} reports waiting`;
      }),
  };
}

/** Polls `unsettled` (what is left, or undefined once nothing is) until nothing is left or three minutes pass. */
export async function waitUntilSettled(unsettled: () => Promise<string | undefined>): Promise<void> {
  for (const deadline = Date.now() + 180_000; ; await new Promise((wake) => setTimeout(wake, 100))) {
    const left = await unsettled();
    if (left === undefined) return;
    if (Date.now() > deadline) return log(`  not settled after 180 s: ${left}`);
  }
}
