import type { LoadJob } from './job.ts';
import { RawPool, requestHead } from './raw-http.ts';
import type { Recorder } from './recorder.ts';
import { acceptedId, requestMaker } from './requests.ts';

const TIMEOUT_MS = 10_000;
/** Below the 5 s that Dispatch's server keeps an idle connection open. */
const IDLE_SOCKET_MS = 4_000;

/**
 * Requests start at a steady rate whatever the pace of the answers, and each latency counts from
 * when its request was due, so a stall shows as the queue it causes. autocannon's own rate
 * (`overallRate`) is no open loop: every connection spends its quota for the second at the start
 * of the second (lib/httpClient.js), all of them together, so the load is a 1 Hz burst.
 */
export async function openLoop(job: LoadJob, recorder: Recorder, ids: string[] | undefined): Promise<number> {
  const rate = job.ratePerSecond as number;
  const make = requestMaker(job);
  const urls = job.urls.map((url) => new URL(url));
  // Dispatch's server closes a connection idle for 5 s (6 with Node's buffer). A connection used
  // as that close arrives fails with ECONNRESET: 1 to 6 requests in some runs, none in others.
  // Closing idle connections first, as clients that read the server's Keep-Alive hint do, keeps
  // that race out of the loop's figures.
  const pools = urls.map(
    (url) => new RawPool(url, { maxConnections: Math.ceil(job.connections / urls.length), idleMs: IDLE_SOCKET_MS, timeoutMs: TIMEOUT_MS }),
  );
  const intervalMs = 1000 / rate;
  const total = Math.round(rate * job.durationSeconds);
  const started = performance.now();
  let due = 0;
  let inFlight = 0;
  let finish: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  const done = () => {
    inFlight--;
    if (due === total && inFlight === 0) finish();
  };
  const fire = (i: number) => {
    const dueAt = started + i * intervalMs;
    const { headers, body } = make(i);
    inFlight++;
    pools[i % pools.length].request(requestHead(job.method, urls[i % urls.length], headers, body), body).then(
      (answer) => {
        recorder.answer(answer.status, performance.now() - dueAt, dueAt - started);
        if (ids && answer.status >= 200 && answer.status < 300) {
          const id = acceptedId(answer.body);
          if (id) ids.push(id);
        }
        done();
      },
      (error: Error) => {
        recorder.fail(error);
        done();
      },
    );
  };
  const tick = () => {
    const now = performance.now();
    while (due < total && started + due * intervalMs <= now) fire(due++);
    // Asleep until the next request is due: a tick every millisecond would wake this process
    // a thousand times a second whatever the rate, and each wake-up takes a core from the
    // processes being measured.
    if (due < total) setTimeout(tick, Math.max(1, started + due * intervalMs - now));
    else if (inFlight === 0) finish();
  };
  tick();
  await finished;
  for (const pool of pools) pool.destroy();
  return (performance.now() - started) / 1000;
}
