import { expect } from 'chai';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { RawPool, requestHead } from '../../scripts/bench/load/raw-http.ts';

// Idle connections outlive every test, so that only a request's own timeout can fail it.
const OPTIONS = { idleMs: 60_000, timeoutMs: 10_000 };

async function listen(server: net.Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
}

const close = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

describe("the bench's raw HTTP client", () => {
  const servers: net.Server[] = [];
  const pools: RawPool[] = [];
  afterEach(async () => {
    for (const pool of pools.splice(0)) pool.destroy();
    for (const server of servers.splice(0)) {
      (server as http.Server).closeAllConnections?.();
      await close(server);
    }
  });

  /** An HTTP server that echoes each request's method, path, authorization and body, counting connections. */
  async function echoServer(): Promise<{ url: URL; connections: () => number; mostAtOnce: () => number }> {
    let connections = 0;
    let open = 0;
    let mostAtOnce = 0;
    const server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const echoed = {
          method: request.method,
          path: request.url,
          authorization: request.headers.authorization,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        // Answers after a turn, so that requests sent together overlap on the server.
        setImmediate(() => {
          response.statusCode = 201;
          response.setHeader('content-type', 'application/json');
          response.end(JSON.stringify(echoed));
        });
      });
    });
    server.on('connection', (socket) => {
      connections++;
      mostAtOnce = Math.max(mostAtOnce, ++open);
      socket.on('close', () => open--);
    });
    servers.push(server);
    return { url: await listen(server), connections: () => connections, mostAtOnce: () => mostAtOnce };
  }

  function pool(url: URL, maxConnections: number, timeoutMs = OPTIONS.timeoutMs, idleMs = OPTIONS.idleMs): RawPool {
    const made = new RawPool(url, { maxConnections, timeoutMs, idleMs });
    pools.push(made);
    return made;
  }

  it('writes the request line, headers and a body of multi-byte characters, and reads back status and body', async () => {
    const server = await echoServer();
    const url = new URL('/messages/send?x=1', server.url);
    const body = JSON.stringify({ to: '+12127000001', body: 'Grüße, 世界 ✓' });
    const answer = await pool(url, 1).request(requestHead('POST', url, { authorization: 'Bearer k1', 'content-type': 'application/json' }, body), body);
    expect(answer.status).to.equal(201);
    expect(JSON.parse(answer.body)).to.deep.equal({ method: 'POST', path: '/messages/send?x=1', authorization: 'Bearer k1', body });
  });

  it('reuses one connection for requests one after another, and a GET carries no body', async () => {
    const server = await echoServer();
    const client = pool(server.url, 4);
    for (let i = 0; i < 3; i++) {
      const answer = await client.request(requestHead('GET', server.url, { authorization: `Bearer k${i}` }, undefined), undefined);
      expect(JSON.parse(answer.body)).to.include({ method: 'GET', authorization: `Bearer k${i}`, body: '' });
    }
    expect(server.connections()).to.equal(1);
  });

  it('opens at most its connections, and the requests beyond them wait for one to come free', async () => {
    const server = await echoServer();
    const client = pool(server.url, 3);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.request(requestHead('GET', new URL(`/${i}`, server.url), {}, undefined), undefined)),
    );
    expect(answers.map((answer) => JSON.parse(answer.body).path)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `/${i}`));
    expect(server.connections()).to.equal(3);
    expect(server.mostAtOnce()).to.equal(3);
  });

  /** A server that answers each request with `writes`, one per turn of its event loop. */
  async function rawServer(writes: string[], then?: (socket: net.Socket) => void): Promise<URL> {
    const server = net.createServer((socket) => {
      socket.once('data', () => {
        void (async () => {
          for (const write of writes) {
            socket.write(write);
            await new Promise((resolve) => setImmediate(resolve));
          }
          then?.(socket);
        })();
      });
    });
    servers.push(server);
    return listen(server);
  }

  it('waits for a body that arrives in parts, after its headers', async () => {
    const url = await rawServer(['HTTP/1.1 202 Accepted\r\nContent-Type: application/json\r\nContent-Length: 11\r\n', '\r\n{"data":', '{}}']);
    const answer = await pool(url, 1).request(requestHead('GET', url, {}, undefined), undefined);
    expect(answer).to.deep.equal({ status: 202, body: '{"data":{}}' });
  });

  it('refuses an answer without Content-Length rather than guess where it ends', async () => {
    const url = await rawServer(['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n']);
    let failure: Error | undefined;
    await pool(url, 1)
      .request(requestHead('GET', url, {}, undefined), undefined)
      .catch((error: Error) => (failure = error));
    expect(failure?.message).to.equal('an answer without Content-Length');
  });

  it('fails the request under way when the server closes the connection, and opens a new one for the next', async () => {
    let connections = 0;
    const server = net.createServer((socket) => {
      const number = ++connections;
      socket.once('data', () => (number === 1 ? socket.destroy() : socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')));
    });
    servers.push(server);
    const url = await listen(server);
    const client = pool(url, 1);
    let failure: (Error & { code?: string }) | undefined;
    await client.request(requestHead('GET', url, {}, undefined), undefined).catch((error: Error) => (failure = error));
    expect(failure?.code).to.equal('ECONNRESET');
    expect(await client.request(requestHead('GET', url, {}, undefined), undefined)).to.deep.equal({ status: 200, body: 'ok' });
    expect(connections).to.equal(2);
  });

  it('fails a request left unanswered past its timeout, and closes its connection', async () => {
    const server = net.createServer((socket) => socket.resume());
    servers.push(server);
    const url = await listen(server);
    const client = pool(url, 1, 50);
    let failure: Error | undefined;
    await client.request(requestHead('GET', url, {}, undefined), undefined).catch((error: Error) => (failure = error));
    expect(failure?.message).to.equal('timed out');
    expect(client.connections).to.equal(0);
  });

  it('never hands a request to a connection that its idle timeout has just closed', async () => {
    const server = await echoServer();
    // Bursts of 1 to 40 requests with pauses of 0 to 7 ms, so that connections keep going idle for
    // about the idle timeout of 5 ms just as the next burst looks for one.
    const client = pool(server.url, 64, OPTIONS.timeoutMs, 5);
    const head = requestHead('GET', server.url, {}, undefined);
    const bursts = Array.from({ length: 400 }, (_, round) => 1 + ((round * 7) % 40));
    const failures: string[] = [];
    let answered = 0;
    for (const [round, size] of bursts.entries()) {
      await Promise.all(
        Array.from({ length: size }, () =>
          client.request(head, undefined).then(
            () => answered++,
            (error: Error & { code?: string }) => failures.push(error.code ?? error.message),
          ),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, round % 8));
    }
    expect(failures).to.deep.equal([]);
    expect(answered).to.equal(bursts.reduce((sum, size) => sum + size));
    // More connections than a burst's requests: idle timeouts closed some, and new ones were opened.
    expect(server.connections()).to.be.greaterThan(40);
  });

  it('takes a new connection after an answer that says Connection: close', async () => {
    const url = await rawServer(['HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}']);
    const client = pool(url, 1);
    expect((await client.request(requestHead('GET', url, {}, undefined), undefined)).status).to.equal(429);
    expect(client.connections).to.equal(0);
    expect((await client.request(requestHead('GET', url, {}, undefined), undefined)).status).to.equal(429);
  });
});
