import { expect } from 'chai';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../../app/free-port.ts';
import { createBaselineTables } from '../../scripts/bench/baselines.ts';
import { startNode, type NodeProcess } from '../../scripts/bench/processes.ts';
import { harness } from '../support/harness.ts';

const FLOOR_SERVER = fileURLToPath(new URL('../../scripts/bench/floor-server.ts', import.meta.url));
const UPSTREAM_ID = 'up-early';

async function post(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

/**
 * An upstream whose delivery report overtakes its answer to the submit: it posts the report first,
 * answers the submit only after the report's answer, and then posts the report again until it is
 * taken, as the bench's fake upstream retries a report that was refused.
 */
async function overtakingUpstream(): Promise<{ url: string; reportStatuses: number[]; reported: Promise<void>; server: http.Server }> {
  const reportStatuses: number[] = [];
  let taken: () => void;
  const reported = new Promise<void>((resolve) => (taken = resolve));
  const server = http.createServer((request, response) => {
    void (async () => {
      const { dlr_url: dlrUrl } = JSON.parse(await text(request)) as { dlr_url: string };
      const report = { id: UPSTREAM_ID, status: 'delivered', timestamp: new Date().toISOString() };
      reportStatuses.push((await post(dlrUrl, report)).status);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: UPSTREAM_ID }));
      while (reportStatuses.at(-1) !== 200) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        reportStatuses.push((await post(dlrUrl, report)).status);
      }
      taken();
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/submit`, reportStatuses, reported, server };
}

describe("the bench's floor server", () => {
  let pool: pg.Pool;
  let logDir: string;
  let floor: NodeProcess | undefined;
  let upstream: http.Server | undefined;

  before(async () => {
    pool = new pg.Pool({ connectionString: harness.database.url, max: 2 });
    await pool.query('DROP TABLE IF EXISTS bench_messages, bench_jobs');
    await createBaselineTables(pool);
    logDir = await mkdtemp(join(tmpdir(), 'floor-server-test-'));
  });

  after(async () => {
    await floor?.stop();
    upstream?.closeAllConnections();
    upstream?.close();
    await pool.query('DROP TABLE IF EXISTS bench_messages, bench_jobs');
    await pool.end();
    await rm(logDir, { recursive: true, force: true });
  });

  it('refuses a delivery report that overtakes the submit answer, and takes it once the message is sent', async () => {
    const peer = await overtakingUpstream();
    upstream = peer.server;
    const port = await freePort();
    floor = startNode(
      'floor-server',
      FLOOR_SERVER,
      { DATABASE_URL: harness.database.url, PORT: String(port), UPSTREAM_URL: peer.url, ACCOUNT_ID: 'acct_floor_test' },
      logDir,
    );
    await floor.waitUntilAnswering(`http://127.0.0.1:${port}/healthz`);

    const sent = await post(`http://127.0.0.1:${port}/send`, { to: '+12125550100', from: 'Bench', body: 'Your code is 482913.' });
    expect(sent.status).to.equal(201);
    const { id } = (sent.body as { data: { id: string } }).data;

    await peer.reported;
    const { rows } = await pool.query('SELECT status, provider_message_id FROM bench_messages WHERE id = $1', [id]);
    expect(rows).to.deep.equal([{ status: 'delivered', provider_message_id: UPSTREAM_ID }]);
    // The first report came before the upstream id was recorded and was refused; a later one was taken.
    expect(peer.reportStatuses[0]).to.equal(409);
    expect(peer.reportStatuses.filter((status) => status === 200)).to.have.length(1);
  });
});
