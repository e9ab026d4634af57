import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HttpSubmitPayload } from '../../providers/http.ts';

/**
 * How the fake answers one submit:
 * - `{ accept: true, id? }`: 200 `{ "id": id }` (a generated id when none is given; a repeated
 *   Idempotency-Key gets the id it got the first time, as a provider that dedupes would answer);
 * - `{ status, body?, headers? }`: that status, with `body` sent as JSON (a string is sent as is);
 * - `{ hang: true }`: never answers; `afterHeaders: true` sends 200 and its headers, then stalls the body;
 * - `{ reset: true }`: reads the request, then destroys the connection without answering;
 * - `{ closeMidBody: true }`: sends 200, its headers and half a body, then destroys the connection.
 * `delayMs` waits before answering (accept and status only).
 */
export type FakeBehaviour =
  | { accept: true; id?: string; delayMs?: number }
  | { status: number; body?: unknown; headers?: Record<string, string>; delayMs?: number }
  | { hang: true; afterHeaders?: boolean }
  | { reset: true }
  | { closeMidBody: true };

export type FakeBehaviourFn = (body: HttpSubmitPayload, index: number) => FakeBehaviour;

export interface FakeRequest {
  method: string;
  /** Path and query, e.g. `/sms`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON: what Dispatch's `http` provider submits (the raw text when it is not JSON). */
  body: HttpSubmitPayload;
  rawBody: string;
  receivedAt: number;
}

export interface HeldAnswer {
  /** Lets the held submit be answered (at once if it has not arrived yet). */
  release: () => void;
  /** Resolves when the held submit has arrived. */
  received: Promise<void>;
}

interface Hold {
  released: Promise<void>;
  release: () => void;
  markReceived: () => void;
}

const SUBMIT_PATH = '/sms';

/** A real HTTP server on 127.0.0.1 that plays an SMS provider speaking Dispatch's `http` protocol. */
export class FakeHttpProvider {
  /** The URL to configure as the route's `config.url`. */
  readonly url: string;
  /** Every request received, in order of arrival. */
  readonly requests: FakeRequest[] = [];
  /** TCP connections accepted so far (a client that keeps connections alive opens fewer than it sends requests). */
  connections = 0;

  #server: Server;
  #behaviour: FakeBehaviour | FakeBehaviourFn = { accept: true };
  #holds: Hold[] = [];
  #pendingHolds = new Set<Hold>();
  #idsByKey = new Map<string, string>();
  #waiters: Array<{ count: number; resolve: () => void }> = [];
  #stopped = false;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  static async start(): Promise<FakeHttpProvider> {
    // Requests reach the handlers only once the server listens, after `fake` is made.
    const server = createServer((req, res) => {
      fake.#handle(req, res).catch(() => res.destroy());
    });
    server.on('connection', () => fake.connections++);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeHttpProvider(server, `http://127.0.0.1:${port}${SUBMIT_PATH}`);
    return fake;
  }

  /** The base URL (no path), e.g. for a redirect target. */
  get origin(): string {
    return new URL(this.url).origin;
  }

  get lastRequest(): FakeRequest | undefined {
    return this.requests.at(-1);
  }

  /** Sets how later submits are answered: one behaviour for all, or a function of the body and the request's index. */
  behave(behaviour: FakeBehaviour | FakeBehaviourFn): void {
    this.#behaviour = behaviour;
  }

  /** Forgets the requests, the connection count, the behaviour (back to accepting) and the idempotency keys seen. */
  reset(): void {
    this.requests.length = 0;
    this.connections = 0;
    this.#behaviour = { accept: true };
    this.#idsByKey.clear();
  }

  /** Holds the answer to the next submit until release() is called (to let a delivery report overtake it). */
  holdNextAnswer(): HeldAnswer {
    let release!: () => void;
    let markReceived!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const received = new Promise<void>((resolve) => (markReceived = resolve));
    const hold: Hold = { released, release, markReceived };
    this.#holds.push(hold);
    this.#pendingHolds.add(hold);
    return {
      release: () => {
        this.#pendingHolds.delete(hold);
        release();
      },
      received,
    };
  }

  /** POSTs a delivery report to `dlrUrl` as the provider would. */
  async postReport(dlrUrl: string, report: object): Promise<Response> {
    return fetch(dlrUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'FakeHttpProvider' },
      body: JSON.stringify(report),
    });
  }

  /** Resolves once at least `count` requests have arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs = 5000): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter = {
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        reject(new Error(`FakeHttpProvider: expected ${count} request(s) within ${timeoutMs} ms, got ${this.requests.length}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Stops listening and closes every connection, hanging and held ones included. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const hold of this.#pendingHolds) hold.release();
    this.#pendingHolds.clear();
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let parsed: unknown = rawBody;
    try {
      parsed = rawBody.length > 0 ? JSON.parse(rawBody) : undefined;
    } catch {
      // keep the raw text
    }
    const body = parsed as HttpSubmitPayload;
    const index = this.requests.length;
    this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, rawBody, receivedAt: Date.now() });
    for (const waiter of this.#waiters.filter((w) => this.requests.length >= w.count)) waiter.resolve();
    this.#waiters = this.#waiters.filter((w) => this.requests.length < w.count);

    const behaviour = typeof this.#behaviour === 'function' ? this.#behaviour(body, index) : this.#behaviour;

    const hold = this.#holds.shift();
    if (hold) {
      hold.markReceived();
      await hold.released;
    }
    if (this.#stopped || res.destroyed) return;

    if ('reset' in behaviour) {
      req.socket.destroy();
      return;
    }
    if ('closeMidBody' in behaviour) {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '32' });
      res.write('{"id":"fake-', () => req.socket.destroy());
      return;
    }
    if ('hang' in behaviour) {
      if (behaviour.afterHeaders) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"id":');
      }
      return; // the socket stays open until the client gives up or stop() closes it
    }
    if (behaviour.delayMs) await new Promise((resolve) => setTimeout(resolve, behaviour.delayMs));
    if (this.#stopped || res.destroyed) return;

    if ('accept' in behaviour) {
      const key = req.headers['idempotency-key'];
      let id = behaviour.id;
      if (id === undefined) {
        id = (typeof key === 'string' && this.#idsByKey.get(key)) || `fake-${randomUUID()}`;
        if (typeof key === 'string') this.#idsByKey.set(key, id);
      }
      send(res, 200, { id });
      return;
    }
    send(res, behaviour.status, behaviour.body, behaviour.headers);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    res.writeHead(status, headers).end();
  } else if (typeof body === 'string') {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(body);
  } else {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers }).end(JSON.stringify(body));
  }
}
