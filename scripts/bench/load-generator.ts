/** The load generator (`node load-generator.ts '<LoadJob JSON>'`), run by load.ts; prints one LoadResult as JSON. */
import autocannon from 'autocannon';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import { text } from 'node:stream/consumers';
import { latency, recipient, type LoadJob } from './load.ts';

const TIMEOUT_MS = 10_000;
const job = JSON.parse(process.argv[2]) as LoadJob;
const [statuses, errorReasons]: Record<string, number>[] = [{}, {}];
const tally = (counts: Record<string, number>, key: string | number) => (counts[key] = (counts[key] ?? 0) + 1);
const ids: string[] = [];
/** The 2xx answers' latencies, in all and by window, at full precision: autocannon's own histogram keeps whole milliseconds. */
const [latencies, windows]: [number[], number[][]] = [[], []];
const started = performance.now();

function answer(status: number, latencyMs: number, atMs: number): void {
  tally(statuses, status);
  if (status < 200 || status > 299) return;
  latencies.push(latencyMs);
  if (job.windowSeconds) (windows[Math.floor(atMs / 1000 / job.windowSeconds)] ??= []).push(latencyMs);
}

function keepId(status: number, body: string): void {
  const id = job.idsFile && status >= 200 && status < 300 ? (JSON.parse(body) as { data?: { id?: string } }).data?.id : undefined;
  if (id) ids.push(id);
}

const fail = (error: Error & { code?: string }) => tally(errorReasons, error.code ?? error.message);
/** The i-th request: the next key in turn, and for a send the next recipient. */
function request(i: number): { headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = job.keys.length > 0 ? { authorization: `Bearer ${job.keys[i % job.keys.length]}` } : {};
  if (!job.send) return { headers };
  const body = JSON.stringify({ to: recipient(i), from: job.send.from, body: 'Your code is 482913.', reference: job.send.reference });
  return { headers: { ...headers, 'content-type': 'application/json' }, body };
}

/** Each connection sends its next request as soon as its last is answered; answers how many it sent. */
async function closedLoop(): Promise<{ seconds: number; sent: number }> {
  let next = 0;
  const setupRequest = (base: autocannon.Request) => {
    const { headers, body } = request(next++);
    return { ...base, headers: { ...base.headers, ...headers }, ...(body !== undefined && { body }) };
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options = { method: job.method, connections: job.connections, duration: job.durationSeconds, timeout: TIMEOUT_MS / 1000 };
    const requests = [{ setupRequest, onResponse: keepId }];
    // autocannon spreads the connections over several URLs; its types say one.
    const instance = autocannon(
      { url: job.urls as unknown as string, ...options, ...(job.maxRequests && { maxOverallRequests: job.maxRequests }), requests },
      (error, done) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(done)),
    );
    instance.on('response', (_client, status, _bytes, latencyMs) => answer(status, latencyMs, performance.now() - started));
    instance.on('reqError', fail);
  });
  return { seconds: result.duration, sent: result.requests.sent };
}

/**
 * Requests start at a steady rate whatever the pace of the answers, each latency counted from when it
 * was due, so that a stall shows as the queue it causes. autocannon's own rate (`overallRate`) is no
 * open loop: each connection spends its quota for a second as fast as it is answered, at the start of
 * the second, so the load comes as a burst every second.
 */
async function openLoop(rate: number): Promise<{ seconds: number; sent: number }> {
  const agents = job.urls.map(() => new http.Agent({ keepAlive: true, maxSockets: Math.ceil(job.connections / job.urls.length) }));
  const [total, intervalMs] = [Math.round(rate * job.durationSeconds), 1000 / rate];
  const fire = (i: number) =>
    new Promise<void>((done) => {
      const { headers, body } = request(i);
      const options = { method: job.method, headers, agent: agents[i % agents.length], timeout: TIMEOUT_MS };
      const sent = http.request(job.urls[i % job.urls.length], options, (response) => {
        const status = response.statusCode as number;
        text(response).then(
          (body) => {
            answer(status, performance.now() - started - i * intervalMs, i * intervalMs);
            done(keepId(status, body));
          },
          (error: Error) => done(void fail(error)),
        );
      });
      sent.on('timeout', () => sent.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      sent.on('error', (error) => done(void fail(error)));
      sent.end(body);
    });
  const requests: Promise<void>[] = [];
  await new Promise<void>(function tick(resolve) {
    const now = performance.now() - started;
    while (requests.length < total && requests.length * intervalMs <= now) requests.push(fire(requests.length));
    // Asleep until the next is due: waking every millisecond would take a core from the processes measured.
    if (requests.length < total) setTimeout(() => tick(resolve), Math.max(1, requests.length * intervalMs - now));
    else resolve();
  });
  await Promise.all(requests);
  for (const agent of agents) agent.destroy();
  return { seconds: (performance.now() - started) / 1000, sent: total };
}

const { seconds, sent } = job.ratePerSecond ? await openLoop(job.ratePerSecond) : await closedLoop();
if (job.idsFile) await writeFile(job.idsFile, ids.join('\n'));
const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, n) => total + n, 0);
const errors = sum(errorReasons);
/** What the load measured; the latencies are the 2xx answers', in milliseconds. */
const result = {
  requests: sent,
  ok: latencies.length,
  okPerSecond: Math.round((latencies.length / seconds) * 10) / 10,
  statuses,
  /** Requests that got no answer (connection errors and timeouts), and why. */
  errors,
  ...(errors > 0 && { errorReasons }),
  /** Requests in flight when a closed loop stopped at its deadline: maybe accepted, never answered. */
  unanswered: Math.max(0, sent - sum(statuses) - errors),
  durationSeconds: Math.round(seconds * 100) / 100,
  latency: latency(latencies),
  ...(job.windowSeconds && { windows: Array.from(windows, (window) => latency(window ?? [])) }),
};
export type LoadResult = typeof result;
process.stdout.write(`${JSON.stringify(result)}\n`);
