/**
 * `npm run bench`: throughput and latency figures of one Dispatch process, measured side by side
 * in one run so that the ratios hold on a noisy shared machine. Uses DATABASE_URL's server (a
 * fresh database made and dropped) or an embedded PostgreSQL in a temporary directory.
 */
import { loadConfig } from '../app/config.ts';
import { createLogger } from '../app/logger.ts';
import { startDispatch } from '../app/server.ts';
import { openAccount } from '../domain/accounts.ts';
import { createApiKey } from '../domain/api-keys.ts';
import { assign, createRoute } from '../domain/routes.ts';
import { SCOPES } from '../domain/scopes.ts';
import { registerSender, reviewSender } from '../domain/senders.ts';
// The same fresh database a test run gets: on DATABASE_URL's server, else an embedded one.
import { createTestDatabase } from '../test/support/database.ts';

const MESSAGES = 1000;
const CONCURRENCY = 20;

/** Runs `task` `count` times with at most `concurrency` in flight; answers the elapsed milliseconds. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<number> {
  const started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) await task(next++);
  }));
  return performance.now() - started;
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

async function main() {
  const database = await createTestDatabase();
  const { url } = database;
  const cleanup = () => database.dispose(false);
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: url });
  const dispatch = await startDispatch(config, url, createLogger('silent'));
  try {
    const account = await openAccount(dispatch.db, { email: 'bench@example.com', name: 'Bench', balance: 1_000_000 });
    const route = await createRoute(dispatch.db, { name: 'bench', provider: 'simulator', config: { outcome: 'delivered', dlr_delay_ms: 3_600_000 }, price_per_segment: 0.001 });
    await assign(dispatch.db, account.id, route.id, 0);
    await reviewSender(dispatch.db, (await registerSender(dispatch.db, account.id, { sender_id: 'Bench' })).id, 'approve');
    const { plainKey } = await createApiKey(dispatch.db, account.id, { name: 'bench', rate_limit: 6000 }, [...SCOPES], null);
    const headers = { authorization: `Bearer ${plainKey}`, 'content-type': 'application/json' };
    const to = (i: number) => `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`;
    const send = (i: number) => fetch(`${dispatch.baseUrl}/messages/send`, { method: 'POST', headers, body: JSON.stringify({ to: to(i), from: 'Bench', body: `Bench ${i}` }) });

    // Warm up connections, prepared plans and the JIT.
    await pool(100, CONCURRENCY, async (i) => void (await (await send(i)).arrayBuffer()));

    const healthMs = await pool(2000, CONCURRENCY, async () => void (await (await fetch(`${dispatch.baseUrl.replace('/api/v1', '')}/healthz`)).arrayBuffer()));
    const accountMs = await pool(2000, CONCURRENCY, async () => void (await (await fetch(`${dispatch.baseUrl}/account`, { headers })).arrayBuffer()));

    const singleIds: string[] = [];
    const singlesMs = await pool(MESSAGES, CONCURRENCY, async (i) => {
      const body = (await (await send(i)).json()) as { data: { id: string } };
      singleIds.push(body.data.id);
    });
    const bulkStarted = performance.now();
    const bulk = await fetch(`${dispatch.baseUrl}/messages/bulk`, { method: 'POST', headers, body: JSON.stringify({ recipients: Array.from({ length: MESSAGES }, (_, i) => to(i)), from: 'Bench', body: 'Bench bulk' }) });
    await bulk.arrayBuffer();
    const bulkMs = performance.now() - bulkStarted;

    const drainStarted = performance.now();
    for (;;) {
      const [{ n }] = await dispatch.db('messages').where({ status: 'pending' }).count({ n: '*' });
      if (Number(n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const drainMs = performance.now() - drainStarted;

    // Accept -> sent latency, one message at a time so that queueing does not dominate.
    const latencies: number[] = [];
    for (let i = 0; i < 100; i++) {
      const accepted = (await (await send(i)).json()) as { data: { id: string; created_at: string } };
      for (;;) {
        const row = await dispatch.db('messages').where({ id: accepted.data.id }).first('status', 'sent_at', 'created_at');
        if (row.status !== 'pending') {
          latencies.push(new Date(row.sent_at).getTime() - new Date(row.created_at).getTime());
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    }

    const rows = [
      ['GET /healthz (bare Express)', `${Math.round(2000 / (healthMs / 1000))} req/s`, '1.00'],
      ['GET /account (auth, rate limit, validation)', `${Math.round(2000 / (accountMs / 1000))} req/s`, (healthMs / accountMs).toFixed(2)],
      [`${MESSAGES} x POST /messages/send (concurrency ${CONCURRENCY})`, `${Math.round(singlesMs)} ms (${Math.round(MESSAGES / (singlesMs / 1000))} msg/s)`, '1.00'],
      [`1 x POST /messages/bulk of ${MESSAGES}`, `${Math.round(bulkMs)} ms (${Math.round(MESSAGES / (bulkMs / 1000))} msg/s)`, (singlesMs / bulkMs).toFixed(1)],
      ['accept -> sent latency (simulator upstream)', `p50 ${percentile(latencies, 50)} ms, p99 ${percentile(latencies, 99)} ms`, ''],
      ['backlog left after the bulk, drained in', `${Math.round(drainMs)} ms`, ''],
    ];
    const width = Math.max(...rows.map((row) => row[0].length));
    process.stdout.write(`\nDispatch benchmark (${new Date().toISOString()}, ${process.env.DATABASE_URL ? 'DATABASE_URL server' : 'embedded PostgreSQL'})\n\n`);
    process.stdout.write(`${'what'.padEnd(width)}  ${'figure'.padEnd(34)}  speed-up vs the row's baseline\n`);
    for (const [what, figure, ratio] of rows) process.stdout.write(`${what.padEnd(width)}  ${figure.padEnd(34)}  ${ratio}\n`);
  } finally {
    await dispatch.stop();
    await cleanup();
  }
}

await main();
