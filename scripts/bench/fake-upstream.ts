/**
 * A tiny SMS provider speaking Dispatch's `http` protocol (docs/providers.md), run as its own process by the bench: it accepts every submit at once and posts a
 * `delivered` report to the message's `dlr_url` shortly after, as a real provider would. It
 * counts submits per message id, so the bench can tell whether any message was sent twice.
 * `GET /stats` answers the counts. Listens on 127.0.0.1:$PORT.
 */
import http from 'node:http';

const REPORT_DELAY_MS = 50;
const REPORTS_IN_FLIGHT = 16;
const REPORT_RETRY_MS = 500;
const REPORT_TRIES = 5;

interface Report {
  url: string;
  body: string;
  tries: number;
}

const submitsById = new Map<string, number>();
let submits = 0;
let nextId = 0;
const stats = { reportsPosted: 0, reportsFailed: 0, reportsWaiting: 0 };

const agent = new http.Agent({ keepAlive: true, maxSockets: REPORTS_IN_FLIGHT });
const queue: Report[] = [];
let inFlight = 0;

function pump(): void {
  while (inFlight < REPORTS_IN_FLIGHT && queue.length > 0) post(queue.shift() as Report);
}

function post(report: Report): void {
  inFlight++;
  const settle = (ok: boolean) => {
    inFlight--;
    if (ok) {
      stats.reportsPosted++;
      stats.reportsWaiting--;
    } else if (++report.tries < REPORT_TRIES) {
      setTimeout(() => (queue.push(report), pump()), REPORT_RETRY_MS);
    } else {
      stats.reportsFailed++;
      stats.reportsWaiting--;
    }
    pump();
  };
  const request = http.request(report.url, { method: 'POST', agent, headers: { 'content-type': 'application/json' }, timeout: 10_000 }, (response) => {
    response.resume();
    response.on('end', () => settle(response.statusCode === 200));
  });
  request.on('timeout', () => request.destroy());
  request.on('error', () => settle(false));
  request.end(report.body);
}

function accept(body: { message_id: string; dlr_url: string }, response: http.ServerResponse): void {
  submits++;
  submitsById.set(body.message_id, (submitsById.get(body.message_id) ?? 0) + 1);
  const id = `up-${++nextId}`;
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id }));
  stats.reportsWaiting++;
  setTimeout(() => {
    queue.push({ url: body.dlr_url, body: JSON.stringify({ id, status: 'delivered', timestamp: new Date().toISOString() }), tries: 0 });
    pump();
  }, REPORT_DELAY_MS);
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/stats') {
    const submittedTwice = [...submitsById.values()].filter((count) => count > 1).length;
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ submits, distinct: submitsById.size, submittedTwice, ...stats }));
    return;
  }
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    try {
      accept(JSON.parse(Buffer.concat(chunks).toString('utf8')), response);
    } catch {
      response.writeHead(400).end();
    }
  });
});
server.keepAliveTimeout = 10_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  agent.destroy();
});
