import { expect } from 'chai';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook } from '../../jobs/webhook-post.ts';
import { freePort } from '../../app/free-port.ts';

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A real local receiver on 127.0.0.1: records what reached it and answers with `handle`. */
class Receiver {
  server: Server;
  url = '';
  received: Received[] = [];
  connections = 0;

  constructor(handle: (req: IncomingMessage, res: ServerResponse) => void) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
        handle(req, res);
      });
    });
    this.server.on('connection', () => {
      this.connections += 1;
    });
  }

  static async start(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
    const receiver = new Receiver(handle);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
    return receiver;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const LOCAL = { timeoutMs: 2000, allowPrivate: true };
const BODY = '{"id":"evt_1","type":"message.delivered","data":{"body":"Grüße ✓ 你好 🚀"}}';
const HEADERS = {
  'Content-Type': 'application/json',
  'Dispatch-Signature': 't=1700000000,v1=abc',
  'User-Agent': 'Dispatch-Webhooks/1.0',
};

describe('postWebhook', () => {
  const receivers: Receiver[] = [];
  async function receiver(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Receiver> {
    const started = await Receiver.start(handle);
    receivers.push(started);
    return started;
  }

  afterEach(async () => {
    while (receivers.length > 0) await receivers.pop()!.stop();
  });

  it('succeeds on 200 and delivers the exact body bytes and the headers', async () => {
    const target = await receiver((_req, res) => res.end('thanks'));
    const result = await postWebhook(`${target.url}/hooks?x=1`, BODY, HEADERS, LOCAL);

    expect(result).to.include({ ok: true, statusCode: 200, error: null });
    expect(result.durationMs).to.be.a('number').and.to.be.at.least(0);
    expect(target.received).to.have.length(1);
    const [got] = target.received;
    expect(got.method).to.equal('POST');
    expect(got.url).to.equal('/hooks?x=1');
    expect(got.body.equals(Buffer.from(BODY, 'utf8'))).to.equal(true);
    expect(got.headers['content-length']).to.equal(String(Buffer.byteLength(BODY, 'utf8')));
    expect(Number(got.headers['content-length'])).to.be.greaterThan(BODY.length); // bytes, not characters
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers['dispatch-signature']).to.equal('t=1700000000,v1=abc');
    expect(got.headers['user-agent']).to.equal('Dispatch-Webhooks/1.0');
    expect(got.headers['transfer-encoding']).to.equal(undefined);
  });

  it('succeeds on 204', async () => {
    const target = await receiver((_req, res) => {
      res.statusCode = 204;
      res.end();
    });
    const result = await postWebhook(target.url, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: true, statusCode: 204, error: null });
    expect(target.received[0].body.toString('utf8')).to.equal(BODY);
  });

  it('sends its own Content-Length, whatever the caller passed', async () => {
    const target = await receiver((_req, res) => res.end());
    const result = await postWebhook(target.url, '{"a":1}', { 'content-length': '999' }, LOCAL);
    expect(result.ok).to.equal(true);
    expect(target.received[0].headers['content-length']).to.equal('7');
  });

  it('fails on 500 with the status code', async () => {
    const target = await receiver((_req, res) => {
      res.statusCode = 500;
      res.end('boom');
    });
    const result = await postWebhook(target.url, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: false, statusCode: 500, error: 'HTTP 500' });
  });

  it('fails on a 4xx with the status code', async () => {
    const target = await receiver((_req, res) => {
      res.statusCode = 410;
      res.end();
    });
    expect(await postWebhook(target.url, BODY, HEADERS, LOCAL)).to.include({ ok: false, statusCode: 410, error: 'HTTP 410' });
  });

  it('does not follow a redirect, and counts it as a failure', async () => {
    const elsewhere = await receiver((_req, res) => res.end());
    const target = await receiver((_req, res) => {
      res.writeHead(302, { Location: `${elsewhere.url}/other` });
      res.end();
    });
    const result = await postWebhook(target.url, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: false, statusCode: 302, error: 'redirect (302) not followed' });
    // The exchange is over and its connection destroyed when postWebhook answers: nothing can follow it.
    expect(elsewhere.received).to.have.length(0);
    expect(elsewhere.connections).to.equal(0);
  });

  it('cuts a receiver that never answers at the timeout', async () => {
    const target = await receiver(() => {
      /* never answers */
    });
    const result = await postWebhook(target.url, BODY, HEADERS, { timeoutMs: 300, allowPrivate: true });
    expect(result).to.include({ ok: false, statusCode: null, error: 'no answer within 300 ms' });
    expect(target.received).to.have.length(1); // it did get the request
  });

  it('cuts a receiver that sends headers and then stalls the body', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.write('partial');
      // never ends
    });
    const result = await postWebhook(target.url, BODY, HEADERS, { timeoutMs: 300, allowPrivate: true });
    expect(result.ok).to.equal(false);
    expect(result.statusCode).to.equal(200);
    expect(result.error).to.equal('no answer within 300 ms (status 200 received, body unfinished)');
  });

  it('stops reading a large response body at 64 KiB and counts the 2xx', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(128 * 1024, 'a'));
      // never ends: only the cap can finish the exchange before the timeout
    });
    // Only the cap can end this exchange as a success: the body never ends, so the deadline would fail it.
    const result = await postWebhook(target.url, BODY, HEADERS, { timeoutMs: 2000, allowPrivate: true });
    expect(result).to.include({ ok: true, statusCode: 200, error: null });
  });

  it('reads a whole response body that ends under the cap', async () => {
    const target = await receiver((_req, res) => res.end(Buffer.alloc(60 * 1024, 'b')));
    expect(await postWebhook(target.url, BODY, HEADERS, LOCAL)).to.include({ ok: true, statusCode: 200 });
  });

  it('fails when the receiver drops the connection mid-body', async () => {
    const target = await receiver((_req, res) => {
      res.writeHead(200, { 'Content-Length': '1000' });
      res.write('short');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const result = await postWebhook(target.url, BODY, HEADERS, LOCAL);
    expect(result.ok).to.equal(false);
    expect(result.statusCode).to.equal(200);
    expect(result.error).to.match(/^response interrupted/);
  });

  it('fails when the receiver closes the connection without answering', async () => {
    const target = await receiver((req) => req.socket.destroy());
    const result = await postWebhook(target.url, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: false, statusCode: null });
    expect(result.error).to.be.a('string').and.not.equal('');
  });

  it('fails with "connection refused" when nothing listens', async () => {
    const port = await freePort();
    const result = await postWebhook(`http://127.0.0.1:${port}/`, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: false, statusCode: null, error: 'connection refused' });
  });

  it('refuses a private address literal in any IPv4 or IPv6 spelling when private URLs are not allowed, before connecting', async () => {
    const target = await receiver((_req, res) => res.end());
    const port = new URL(target.url).port;
    const literals: Array<[string, string]> = [
      [target.url, '127.0.0.1'],
      [`http://2130706433:${port}/`, '127.0.0.1'],
      [`http://[::1]:${port}/`, '::1'],
      [`http://[::ffff:127.0.0.1]:${port}/`, '::ffff:7f00:1'],
      [`http://[::127.0.0.1]:${port}/`, '::7f00:1'], // IPv4-compatible: 'unicast' to request-filtering-agent, which let it through
      [`http://[::10.0.0.1]:${port}/`, '::a00:1'],
      [`http://[64:ff9b::127.0.0.1]:${port}/`, '64:ff9b::7f00:1'], // NAT64
    ];
    for (const [url, address] of literals) {
      const result = await postWebhook(url, BODY, HEADERS, { timeoutMs: 2000, allowPrivate: false });
      expect(result, url).to.include({ ok: false, statusCode: null, error: `address not allowed: ${address} is not a public address` });
    }
    expect(target.connections).to.equal(0);
    expect(target.received).to.have.length(0);
  });

  it('refuses localhost after resolving it, when private URLs are not allowed, before connecting', async () => {
    const target = await receiver((_req, res) => res.end());
    const port = new URL(target.url).port;
    const result = await postWebhook(`http://localhost:${port}/`, BODY, HEADERS, { timeoutMs: 2000, allowPrivate: false });
    expect(result).to.include({ ok: false, statusCode: null });
    expect(result.error).to.match(/^address not allowed: localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
    expect(target.connections).to.equal(0);
  });

  it('connects to the same private addresses when private URLs are allowed', async () => {
    const target = await receiver((_req, res) => res.end());
    const port = new URL(target.url).port;
    for (const url of [target.url, `http://localhost:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`]) {
      expect(await postWebhook(url, BODY, HEADERS, LOCAL), url).to.include({ ok: true, statusCode: 200 });
    }
  });

  it('reports a TLS failure (https to a plain HTTP port)', async () => {
    const target = await receiver((_req, res) => res.end());
    const port = new URL(target.url).port;
    const result = await postWebhook(`https://127.0.0.1:${port}/`, BODY, HEADERS, LOCAL);
    expect(result).to.include({ ok: false, statusCode: null });
    expect(result.error).to.equal('TLS error: wrong version number');
  });

  it('answers an unusable URL or header with a failure instead of throwing', async () => {
    expect(await postWebhook('not a url', BODY, HEADERS, LOCAL)).to.include({ ok: false, error: 'invalid URL' });
    expect(await postWebhook('ftp://127.0.0.1/', BODY, HEADERS, LOCAL)).to.include({
      ok: false,
      error: 'unsupported URL scheme ftp:',
    });
    const target = await receiver((_req, res) => res.end());
    const result = await postWebhook(target.url, BODY, { 'X-Bad': 'line\r\nbreak' }, LOCAL);
    expect(result).to.include({ ok: false, statusCode: null });
    expect(result.error).to.match(/^invalid request: /);
    expect(target.connections).to.equal(0);
  });

  it('does not let a slow receiver hold up a concurrent delivery to a fast one', async () => {
    const held: ServerResponse[] = [];
    const slow = await receiver((_req, res) => held.push(res));
    const fast = await receiver((_req, res) => res.end());
    const slowResult = postWebhook(slow.url, BODY, HEADERS, { timeoutMs: 10_000, allowPrivate: true });
    const fastResult = await postWebhook(fast.url, BODY, HEADERS, { timeoutMs: 10_000, allowPrivate: true });
    expect(fastResult).to.include({ ok: true, statusCode: 200 });
    expect(held).to.have.length(1); // the slow one is still unanswered
    held[0].end();
    expect(await slowResult).to.include({ ok: true, statusCode: 200 });
  });

  it('leaves no socket open after a delivery', async () => {
    const target = await receiver((_req, res) => res.end('ok'));
    await postWebhook(target.url, BODY, HEADERS, LOCAL);
    const open = () => new Promise<number>((resolve, reject) => target.server.getConnections((error, count) => (error ? reject(error) : resolve(count))));
    const deadline = Date.now() + 5000;
    while ((await open()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await open()).to.equal(0);
  });
});
