/**
 * `node scripts/bench-message-log.ts` (by hand): GET /messages on an account that holds 1,000,000
 * messages, issue 9's target 5 alone. Seeds them with one SQL statement (the bench's
 * seedMessages: generate_series, not the API), starts Dispatch, runs the bench's load process
 * (autocannon, a process of its own) at 8 connections for a few seconds per query, and prints
 * p50/p99 per query and whether `pagination.total` equals a count(*) of the matching rows. A
 * second table times the same reads as listMessages calls straight to the database, 8 at a time,
 * to tell the query's cost from the HTTP path's. Uses an embedded PostgreSQL of its own, or a new
 * database on `--database-url`'s server.
 *
 * Options: --messages N (default 1,000,000), --seconds S per query (default 5).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../app/config.ts';
import { createLogger } from '../app/logger.ts';
import { startDispatch } from '../app/server.ts';
import { listMessages, type MessageFilter } from '../db/messages.ts';
import { openAccount } from '../domain/accounts.ts';
import { createApiKey } from '../domain/api-keys.ts';
import { SCOPES } from '../domain/scopes.ts';
import { runLoad } from './bench/load.ts';
import type { LoadResult } from './bench/load/job.ts';
import { seedMessages } from './bench/message-log.ts';
import { percentile } from './bench/percentiles.ts';
import { startDatabase } from './bench/postgres.ts';

const CONNECTIONS = 8;
// One key may make at most 6,000 requests a minute: the load takes keys in turn.
const KEYS = 40;
// seedMessages spreads the messages over 10,000 recipients.
const TO = '+12127000042';

const QUERIES: { name: string; query: string; filter: MessageFilter; page: number }[] = [
  { name: 'first page', query: '', filter: {}, page: 1 },
  { name: 'status filter (delivered)', query: '?status=delivered', filter: { status: 'delivered' }, page: 1 },
  { name: 'status filter (failed)', query: '?status=failed', filter: { status: 'failed' }, page: 1 },
  { name: 'to filter', query: `?to=${encodeURIComponent(TO)}`, filter: { to: TO }, page: 1 },
  { name: 'page 1,000', query: '?page=1000', filter: {}, page: 1000 },
  { name: 'page 1,000 of status filter', query: '?status=delivered&page=1000', filter: { status: 'delivered' }, page: 1000 },
];

/** Answers other than 2xx, and requests that got none; not those a closed loop left unanswered at its deadline. */
const refused = (load: LoadResult) => load.errors + Object.entries(load.statuses).reduce((sum, [status, n]) => sum + (status.startsWith('2') ? 0 : n), 0);

function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd();
  return `${line(header)}\n${rows.map(line).join('\n')}\n`;
}

async function main(options: { messages: number; seconds: number; databaseUrl?: string }): Promise<void> {
  const database = await startDatabase(options.databaseUrl);
  const config = loadConfig({ PORT: '0', LOG_LEVEL: 'silent', DATABASE_URL: database.url });
  const dispatch = await startDispatch(config, database.url, createLogger('silent'));
  const pool = new pg.Pool({ connectionString: database.url, max: CONNECTIONS });
  try {
    const { db } = dispatch;
    const account = await openAccount(db, { email: 'bench-log@example.com', name: 'Message log bench', balance: 100 });
    const keys = await Promise.all(Array.from({ length: KEYS }, (_, i) => createApiKey(db, account.id, { name: `bench ${i}`, rate_limit: 6000 }, [...SCOPES], null)));
    const seeding = performance.now();
    await seedMessages(pool, account.id, keys[0].row.id, options.messages);
    process.stdout.write(`Seeded ${options.messages.toLocaleString('en')} messages in ${Math.round(performance.now() - seeding)} ms (${database.where})\n`);

    const http: string[][] = [];
    const direct: string[][] = [];
    for (const { name, query, filter, page } of QUERIES) {
      const url = `${dispatch.baseUrl}/messages${query}`;
      const answer = (await (await fetch(url, { headers: { authorization: `Bearer ${keys[0].plainKey}` } })).json()) as { pagination: { total: number } };
      const counting = db('messages').where({ account_id: account.id });
      if (filter.status) counting.where({ status: filter.status });
      if (filter.to) counting.where({ to: filter.to });
      const [{ n }] = await counting.count({ n: '*' });
      const load = await runLoad({ urls: [url], method: 'GET', keys: keys.map((key) => key.plainKey), connections: CONNECTIONS, durationSeconds: options.seconds });
      const total = answer.pagination.total === Number(n) ? `exact (${n})` : `WRONG: ${answer.pagination.total}, not ${n}`;
      http.push([name, `${load.latency.p50} ms`, `${load.latency.p99} ms`, `${Math.round(load.okPerSecond)}`, `${refused(load)}`, total]);

      const latencies: number[] = [];
      const until = performance.now() + options.seconds * 1000;
      await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          const started = performance.now();
          await listMessages(db, account.id, filter, { page, limit: 50 });
          latencies.push(performance.now() - started);
        }
      }));
      const sorted = Float64Array.from(latencies).sort();
      direct.push([name, `${percentile(sorted, 50).toFixed(1)} ms`, `${percentile(sorted, 99).toFixed(1)} ms`, `${Math.round(sorted.length / options.seconds)}`]);
    }
    process.stdout.write(`\nGET /messages, ${options.messages.toLocaleString('en')} messages, ${CONNECTIONS} connections, ${options.seconds} s per query (${new Date().toISOString()})\n\n`);
    process.stdout.write(table(['query', 'p50', 'p99', 'req/s', 'not 2xx', 'pagination.total'], http));
    process.stdout.write(`\nThe same reads as listMessages calls straight to the database, ${CONNECTIONS} at a time\n\n`);
    process.stdout.write(table(['query', 'p50', 'p99', 'calls/s'], direct));
  } finally {
    await pool.end();
    await dispatch.stop();
    await database.stop();
  }
}

const { values } = parseArgs({ options: { messages: { type: 'string', default: '1000000' }, seconds: { type: 'string', default: '5' }, 'database-url': { type: 'string' } } });
await main({ messages: Number(values.messages), seconds: Number(values.seconds), databaseUrl: values['database-url'] });
