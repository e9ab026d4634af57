import { timeBareBulkTransaction } from '../baselines.ts';
import type { Bench } from '../context.ts';
import { latency, recipient } from '../load.ts';
import { ms, ratio, row, type Measurement } from '../report.ts';

/**
 * POST /messages/bulk of 1,000 recipients, one at a time with the backlog drained in between, each
 * followed by a bare transaction inserting as many message and job rows, so that both medians come
 * from the same minutes of a machine whose speed drifts. The first, of 100, compiles the path.
 */
export async function measureBulk(bench: Bench): Promise<Measurement> {
  const runs = bench.options.durations.bulkRuns;
  const tenant = await bench.tenant('bulk', 1);
  const timings: { bulkMs: number; bareMs: number }[] = [];
  const headers = { authorization: `Bearer ${tenant.keys[0]}`, 'content-type': 'application/json' };
  let accepted = 0;
  for (let run = 0; run <= runs; run++) {
    const recipients = Array.from({ length: run === 0 ? 100 : 1000 }, (_, i) => recipient(run * 1000 + i));
    const body = JSON.stringify({ recipients, from: tenant.from, body: 'Your code is 482913.', reference: 'bench-bulk' });
    const started = performance.now();
    const response = await fetch(bench.apiUrls('/messages/bulk')[0], { method: 'POST', headers, body });
    await response.arrayBuffer();
    const bulkMs = performance.now() - started;
    if (response.status !== 201) throw new Error(`POST /messages/bulk answered ${response.status}`);
    accepted += recipients.length;
    await bench.settle();
    const bareMs = await timeBareBulkTransaction(bench.pool, run);
    if (run > 0) timings.push({ bulkMs, bareMs });
  }
  bench.sends.set('bench-bulk', { accepted, unanswered: 0 });
  const [bulkMs, bareMs] = [latency(timings.map((t) => t.bulkMs)).p50, latency(timings.map((t) => t.bareMs)).p50];
  const cells = { baseline: `bare SQL transaction ${ms(bareMs)}`, ratio: ratio(bulkMs / bareMs, 'x'), goal: '<= 4x', pass: bulkMs / bareMs <= 4 };
  const figures = { timings, bulkMedianMs: bulkMs, bareMedianMs: bareMs };
  return { rows: [row('bulk', `POST /messages/bulk, 1,000 recipients (median of ${runs})`, ms(bulkMs), cells)], figures };
}
