/**
 * An SMS provider speaking Dispatch's `http` protocol on 127.0.0.1:$PORT: it accepts every submit and
 * posts a `delivered` report shortly after, retrying one not taken, as a carrier does. It counts
 * submits per message id, so that the totals can tell a message sent twice; GET /stats answers them.
 */
import http from 'node:http';
import { text } from 'node:stream/consumers';

const REPORT_DELAY_MS = 50;
const REPORT_RETRY_MS = 500;
const REPORT_TRIES = 5;
const submitsById = new Map<string, number>();
let [submits, nextId] = [0, 0];
const stats = { reportsPosted: 0, reportsFailed: 0, reportsWaiting: 0 };
// The agent queues reports beyond 16 at once, as a carrier's limited senders do.
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

function post(url: string, body: string, tries = 1): void {
  const settle = (ok: boolean) => {
    if (!ok && tries < REPORT_TRIES) return void setTimeout(() => post(url, body, tries + 1), REPORT_RETRY_MS);
    stats.reportsWaiting--;
    stats[ok ? 'reportsPosted' : 'reportsFailed']++;
  };
  const request = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' }, timeout: 10_000 }, (response) => {
    response.resume().on('end', () => settle(response.statusCode === 200));
  });
  request.on('timeout', () => request.destroy());
  request.on('error', () => settle(false));
  request.end(body);
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/stats') {
    const submittedTwice = [...submitsById.values()].filter((count) => count > 1).length;
    const counts = { submits, distinct: submitsById.size, submittedTwice, ...stats };
    return void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(counts));
  }
  void text(request)
    .then((raw) => {
      const submit = JSON.parse(raw) as { message_id: string; dlr_url: string };
      submits++;
      submitsById.set(submit.message_id, (submitsById.get(submit.message_id) ?? 0) + 1);
      const id = `up-${++nextId}`;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
      stats.reportsWaiting++;
      setTimeout(() => post(submit.dlr_url, JSON.stringify({ id, status: 'delivered', timestamp: new Date().toISOString() })), REPORT_DELAY_MS);
    })
    .catch(() => response.writeHead(400).end());
});
server.keepAliveTimeout = 10_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => (server.close().closeAllConnections(), agent.destroy()));
