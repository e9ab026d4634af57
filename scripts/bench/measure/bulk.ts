import { timeBareBulkTransaction } from '../baselines.ts';
import { log, type Bench, type Measurement } from '../context.ts';
import { ms, ratio } from '../format.ts';
import { recipient } from '../load/requests.ts';
import { median, round } from '../percentiles.ts';

const RECIPIENTS = 1000;
/** The warm-up's size: enough to compile the path, few enough for the worker to drain at once. */
const WARM_UP_RECIPIENTS = 100;
const REFERENCE = 'bench-4-bulk';

/**
 * Target 4: POST /messages/bulk with 1,000 recipients, one request at a time with the backlog
 * drained in between (the figure is the request's own cost, not the worker's), the median of
 * several; against the median bare transaction that inserts as many message and job rows. Each
 * request is followed by one bare transaction, so that both medians come from the same minutes
 * of a machine whose speed drifts (the bare transaction took 20 to 36 ms in runs an hour apart).
 */
export async function measureBulk(bench: Bench): Promise<Measurement> {
  const runs = bench.options.durations.bulkRuns;
  const tenant = await bench.tenant('bulk', 1);
  const url = bench.apiUrls('/messages/bulk')[0];
  log(`4: POST /messages/bulk of ${RECIPIENTS}, ${runs} runs after a warm-up, each followed by the bare transaction`);
  const runsMs: number[] = [];
  const bareRunsMs: number[] = [];
  let accepted = 0;
  for (let run = 0; run <= runs; run++) {
    const size = run === 0 ? WARM_UP_RECIPIENTS : RECIPIENTS;
    const body = JSON.stringify({
      recipients: Array.from({ length: size }, (_, i) => recipient(run * RECIPIENTS + i)),
      from: tenant.from,
      body: 'Your code is 482913.',
      reference: REFERENCE,
    });
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${tenant.keys[0]}`, 'content-type': 'application/json' }, body });
    await response.arrayBuffer();
    const elapsed = performance.now() - started;
    if (response.status !== 201) throw new Error(`POST /messages/bulk answered ${response.status}`);
    accepted += size;
    await bench.settle();
    const bareMs = await timeBareBulkTransaction(bench.pool, run);
    if (run > 0) {
      runsMs.push(round(elapsed, 2));
      bareRunsMs.push(bareMs);
    }
  }
  bench.sends.set(REFERENCE, { accepted, unanswered: 0 });
  const bulkMs = median(runsMs);
  const bare = { medianMs: median(bareRunsMs), runsMs: bareRunsMs };
  const times = bulkMs / bare.medianMs;
  return {
    rows: [
      {
        target: '4',
        what: `POST /messages/bulk, ${RECIPIENTS} recipients (median of ${runs})`,
        measured: ms(bulkMs),
        baseline: `bare SQL transaction ${ms(bare.medianMs)}`,
        ratio: ratio(times, 'x'),
        goal: '<= 4x',
        pass: times <= 4,
      },
    ],
    figures: { runsMs, bulkMedianMs: bulkMs, bare },
  };
}
