import { fileURLToPath } from 'node:url';
import { freePort } from '../../../app/free-port.ts';
import type { PgbenchResult } from '../baselines.ts';
import { log, waitUntilSettled, type Bench, type Measurement, type Row } from '../context.ts';
import { runLoad } from '../load.ts';
import type { LoadJob } from '../load/job.ts';
import { lifeCpuRow, withMachineCpu } from '../machine-cpu.ts';
import { startNode } from '../processes.ts';
import { startUpstream } from '../upstream.ts';
import { againstPgbench, CLOSED_LOOP_CONNECTIONS } from './send-throughput.ts';

const ACCOUNT_ID = 'acct_floor';

/**
 * A diagnosis of target 1, not a target: the same closed loop against floor-server.ts, which
 * does only the three HTTP exchanges and the three row writes of a message's life, on a fake
 * upstream of its own (so that the totals check counts Dispatch's submits alone). Its rate
 * against pgbench tells what the machine allows any server of this protocol; its CPU a message,
 * over the loop and the drain after it, tells what Dispatch's own work adds.
 */
export async function measureFloor(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement> {
  const { durations } = bench.options;
  const upstream = await startUpstream(bench.runDir, 'fake-upstream-floor');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const server = startNode(
    'floor-server',
    fileURLToPath(new URL('../floor-server.ts', import.meta.url)),
    [],
    { DATABASE_URL: bench.databaseUrl, PORT: String(port), UPSTREAM_URL: upstream.submitUrl, ACCOUNT_ID },
    bench.runDir,
  );
  try {
    await server.waitUntilAnswering(`${origin}/healthz`);
    const settle = () =>
      waitUntilSettled(async () => {
        const [{ rows }, stats] = await Promise.all([
          bench.pool.query(`SELECT count(*)::int AS n FROM bench_messages WHERE account_id = $1 AND status IN ('pending', 'sent')`, [ACCOUNT_ID]),
          upstream.stats(),
        ]);
        return rows[0].n === 0 && stats.reportsWaiting === 0 ? undefined : `${rows[0].n} not delivered, ${stats.reportsWaiting} reports waiting`;
      });
    const job: Omit<LoadJob, 'durationSeconds'> = {
      urls: [`${origin}/send`],
      method: 'POST',
      keys: [],
      send: { from: 'Bench', reference: 'floor' },
      connections: CLOSED_LOOP_CONNECTIONS,
    };
    log(`floor: warm-up, ${durations.warmupSeconds} s`);
    await runLoad({ ...job, durationSeconds: durations.warmupSeconds });
    await settle();
    log(`floor: POST /send, closed loop, ${CLOSED_LOOP_CONNECTIONS} connections, ${durations.sendSeconds} s`);
    const { value: result, cpu } = await withMachineCpu(() => runLoad({ ...job, durationSeconds: durations.sendSeconds }));
    const { value: drain, cpu: drainCpu } = await withMachineCpu(settle);
    const rows: Row[] = [
      {
        target: 'floor',
        what: `the floor: a server doing only a message's three HTTP exchanges and three row writes, in target 1's closed loop (diagnosis)`,
        ...againstPgbench(result, pgbench).cells,
        goal: '',
        pass: undefined,
      },
      lifeCpuRow('floor', 'the floor (its server counted as Dispatch)', result.ok, cpu, drainCpu, drain.ms),
    ];
    return { rows, figures: { result, cpu, drainMs: drain.ms, drainCpu } };
  } finally {
    await server.stop();
    await upstream.process.stop();
  }
}
