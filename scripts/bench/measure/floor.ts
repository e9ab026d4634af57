import { fileURLToPath } from 'node:url';
import { freePort } from '../../../app/free-port.ts';
import type { PgbenchResult } from '../baselines.ts';
import { waitUntilSettled, type Bench } from '../context.ts';
import { cpuPer } from '../probes.ts';
import { runLoad } from '../load.ts';
import { startNode, startUpstream } from '../processes.ts';
import { row, type Measurement } from '../report.ts';
import { againstPgbench, CLOSED_LOOP_CONNECTIONS, closedLoop } from './send.ts';

const ACCOUNT_ID = 'acct_floor';
/**
 * The send closed loop against floor-server.ts, on a fake upstream of its own so that the totals count
 * Dispatch's submits alone: its rate against pgbench is what the machine allows any server of this
 * protocol, and its CPU a message what Dispatch's own work adds beyond it.
 */
export async function measureFloor(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement> {
  const upstream = await startUpstream(bench.runDir, 'fake-upstream-floor');
  const port = await freePort();
  const env = { DATABASE_URL: bench.databaseUrl, PORT: String(port), UPSTREAM_URL: upstream.submitUrl, ACCOUNT_ID };
  const server = startNode('floor-server', fileURLToPath(new URL('../floor-server.ts', import.meta.url)), env, bench.runDir);
  try {
    await server.waitUntilAnswering(`http://127.0.0.1:${port}/healthz`);
    const settle = () =>
      waitUntilSettled(async () => {
        const query = `SELECT count(*)::int AS n FROM bench_messages WHERE account_id = $1 AND status IN ('pending', 'sent')`;
        const [{ rows }, stats] = await Promise.all([bench.pool.query<{ n: number }>(query, [ACCOUNT_ID]), upstream.stats()]);
        return rows[0].n === 0 && stats.reportsWaiting === 0 ? undefined : `${rows[0].n} not delivered, ${stats.reportsWaiting} reports waiting`;
      });
    const send = { from: 'Bench', reference: 'floor' };
    const load = (durationSeconds: number) =>
      runLoad({ urls: [`http://127.0.0.1:${port}/send`], method: 'POST', keys: [], send, connections: CLOSED_LOOP_CONNECTIONS, durationSeconds });
    const { result, life } = await closedLoop(bench, load, settle);
    const { share, measured, ...cells } = againstPgbench(result, pgbench);
    const what = "a server doing only a message's three HTTP exchanges and three row writes, the send closed loop (diagnosis)";
    return { rows: [row('floor', what, `${measured}; ${cpuPer(life, result.ok)} until the last was delivered`, cells)], figures: { result, life, share } };
  } finally {
    await server.stop();
    await upstream.process.stop();
  }
}
