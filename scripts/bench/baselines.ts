/**
 * What the machine can do, in the same run: pgbench's per-transaction ceiling and one bare bulk
 * transaction, both into tables shaped like Dispatch's messages (with its indexes) and jobs.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type pg from 'pg';
import { recipient } from './load.ts';

const MESSAGE_COLUMNS = `id, account_id, "to", "from", body, status, encoding, segments, cost, currency`;
export async function createBaselineTables(pool: pg.Pool): Promise<void> {
  await pool.query(`
    CREATE TABLE bench_messages (LIKE messages INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
    CREATE TABLE bench_jobs (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text NOT NULL, data jsonb, state text NOT NULL DEFAULT 'created',
      priority integer NOT NULL DEFAULT 0, retry_limit integer NOT NULL DEFAULT 2, start_after timestamptz NOT NULL DEFAULT now(),
      created_on timestamptz NOT NULL DEFAULT now());
    CREATE INDEX bench_jobs_fetch_idx ON bench_jobs (name, start_after) WHERE state = 'created';`);
}

/** Debian's versioned binaries first (not always on PATH), then PATH. */
function pgbenchBinary(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.map((version) => join(root, version, 'bin', 'pgbench')).find((path) => existsSync(path)) ?? 'pgbench';
}

const PGBENCH_SCRIPT = `\\set n random(1, 1000000000000)
BEGIN;
INSERT INTO bench_messages (${MESSAGE_COLUMNS}) VALUES ('msg_pgbench_' || :client_id || '_' || :n, 'acct_pgbench', '+12127000000', 'Bench', 'Your code is 482913.', 'pending', 'GSM-7', 1, 0.001, 'USD');
INSERT INTO bench_jobs (name, data) VALUES ('sendMessage', jsonb_build_object('message_id', 'msg_pgbench_' || :client_id || '_' || :n));
END;
`;

export type PgbenchResult = Awaited<ReturnType<typeof runPgbench>>;
/** pgbench, 10 clients, one transaction = one message-shaped row and one job-shaped row. */
export async function runPgbench(databaseUrl: string, seconds: number, workDir: string) {
  const script = join(workDir, 'pgbench-send.sql');
  await writeFile(script, PGBENCH_SCRIPT);
  const binary = pgbenchBinary();
  let output = '';
  const child = spawn(binary, ['--no-vacuum', '--client', '10', '--jobs', '2', '--time', String(seconds), '--file', script, databaseUrl]);
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => child.once('error', reject).once('exit', resolve));
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(output)?.[1];
  const transactions = /number of transactions actually processed: (\d+)/.exec(output)?.[1];
  if (code !== 0 || !tps || !transactions) throw new Error(`pgbench (${binary}) failed (exit ${code}):\n${output.slice(-2000)}`);
  return { transactionsPerSecond: Number(tps), transactions: Number(transactions), clients: 10, seconds, binary };
}

/** One transaction inserting 1,000 message rows and their 1,000 job rows, as a bulk send must at least: its milliseconds. `run` keeps each run's ids apart. */
export async function timeBareBulkTransaction(pool: pg.Pool, run: number): Promise<number> {
  const client = await pool.connect();
  try {
    const ids = Array.from({ length: 1000 }, (_, i) => `msg_bare_${run}_${i}`);
    const recipients = ids.map((_, i) => recipient(i));
    const started = performance.now();
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO bench_messages (${MESSAGE_COLUMNS})
       SELECT id, 'acct_bare', r, 'Bench', 'Your code is 482913.', 'pending', 'GSM-7', 1, 0.001, 'USD' FROM unnest($1::text[], $2::text[]) AS m (id, r)`,
      [ids, recipients],
    );
    await client.query(`INSERT INTO bench_jobs (name, data) SELECT 'sendMessage', jsonb_build_object('message_id', id) FROM unnest($1::text[]) AS id`, [ids]);
    await client.query('COMMIT');
    return performance.now() - started;
  } finally {
    client.release();
  }
}
