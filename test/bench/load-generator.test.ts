import { expect } from 'chai';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLoad, type LoadJob } from '../../scripts/bench/load.ts';

describe("the bench's load generator", () => {
  let server: http.Server;
  let url: string;
  let dir: string;
  const arrivals: number[] = [];

  before(async () => {
    let next = 0;
    // Accepts each request as a message after 5 ms, as Dispatch answers a send.
    server = http.createServer((request, response) => {
      arrivals.push(performance.now());
      request.resume().on('end', () => {
        setTimeout(() => response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ data: { id: `msg_${++next}` } })), 5);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/messages/send`;
    dir = await mkdtemp(join(tmpdir(), 'load-generator-test-'));
  });

  beforeEach(() => void arrivals.splice(0));

  after(async () => {
    server.closeAllConnections();
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const job = (fields: Partial<LoadJob>): LoadJob => ({
    urls: [url],
    method: 'POST',
    keys: ['k1', 'k2'],
    send: { from: 'Bench', reference: 'test' },
    connections: 8,
    durationSeconds: 1,
    ...fields,
  });

  it('paces an open loop over each second, not in a burst at its start, and keeps every accepted id', async () => {
    const idsFile = join(dir, 'open.txt');
    const result = await runLoad(job({ ratePerSecond: 50, durationSeconds: 2, windowSeconds: 1, idsFile }));
    expect(result.ok).to.equal(100);
    expect(result.latency.p50).to.be.at.least(5);
    expect(result.windows?.map((window) => window.count)).to.deep.equal([50, 50]);
    // A request due every 20 ms reaches nearly every tenth of a second; a burst a second reaches two or three.
    const tenths = new Set(arrivals.map((at) => Math.floor((at - arrivals[0]) / 100)));
    expect(tenths.size).to.be.at.least(14);
    expect(new Set((await readFile(idsFile, 'utf8')).split('\n')).size).to.equal(100);
  });

  it('runs a closed loop through autocannon up to a number of requests, keeping every accepted id', async () => {
    const idsFile = join(dir, 'closed.txt');
    const result = await runLoad(job({ maxRequests: 100, durationSeconds: 10, idsFile }));
    expect(result.ok).to.equal(100);
    expect(result.statuses).to.deep.equal({ 201: 100 });
    expect(result.latency.p99).to.be.at.least(5);
    expect((await readFile(idsFile, 'utf8')).split('\n')).to.have.length(100);
  });
});
