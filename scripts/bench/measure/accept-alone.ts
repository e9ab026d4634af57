import type { PgbenchResult } from '../baselines.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { count, cpuPerMessage, perSecond } from '../format.ts';
import { machineCpuRow, withMachineCpu } from '../machine-cpu.ts';
import { pendingCount } from '../message-log.ts';
import { againstPgbench, closedLoopSends } from './send-throughput.ts';

const POLL_MS = 250;
const SEND_TIMEOUT_MS = 300_000;

/**
 * What bounds target 1, measured rather than argued (a diagnosis, not a target): target 1's closed
 * loop while the worker processes are paused (SIGSTOP), so that accepting has the machine to
 * itself; then the rate at which the resumed workers send the backlog that piled up, with the
 * upstream's reports coming in meanwhile. Jobs a worker held when it was paused return to the
 * queue by their heartbeat, as a crashed process's would; the totals check still counts every
 * message once. Needs `--worker-processes`.
 */
export async function measureAcceptAlone(bench: Bench, pgbench: PgbenchResult | undefined): Promise<Measurement> {
  if (bench.workers.length === 0) throw new Error('needs --worker-processes 1 or more, whose work it pauses');
  const { tenant, result, cpu } = await closedLoopSends(bench, 'accept-alone', 'bench-accept-alone', {
    before: () => bench.workers.forEach((worker) => worker.process.pause()),
    after: () => bench.workers.forEach((worker) => worker.process.resume()),
  });
  const backlog = await pendingCount(bench.pool, tenant.accountId);
  log(`accept-alone: workers resumed with ${backlog} messages pending`);
  const resumed = Date.now();
  // The sending and its reports, counted until the upstream has no report left to post.
  const { value: sendSeconds, cpu: sendingCpu } = await withMachineCpu(async () => {
    for (let pending = backlog; pending > 0; pending = await pendingCount(bench.pool, tenant.accountId)) {
      if (Date.now() - resumed > SEND_TIMEOUT_MS)
        throw new Error(`${count(pending)} of ${count(backlog)} still pending ${SEND_TIMEOUT_MS / 1000} s after the workers resumed`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const seconds = (Date.now() - resumed) / 1000;
    await bench.settle();
    return seconds;
  });
  return {
    rows: [
      {
        target: 'accept-alone',
        what: `target 1's closed loop with the worker processes paused (diagnosis)`,
        ...againstPgbench(result, pgbench).cells,
        goal: '',
        pass: undefined,
      },
      machineCpuRow('accept-alone', 'that loop', cpu, result.ok),
      {
        target: 'accept-alone',
        what: 'its backlog, sent by the resumed workers while no send arrives, with its reports (diagnosis)',
        measured: `${count(backlog)} in ${sendSeconds.toFixed(1)} s: ${perSecond(backlog / sendSeconds, 'sent')}; ${cpuPerMessage(sendingCpu, backlog)}`,
        baseline: '',
        ratio: '',
        goal: '',
        pass: undefined,
      },
    ],
    figures: { result, cpu, backlog, sendSeconds, sendingCpu },
  };
}
