import net from 'node:net';

export interface RawAnswer {
  status: number;
  body: string;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** A request's bytes up to its body: the request line, `host`, the headers given, and the body's length if it has one. */
export function requestHead(method: string, url: URL, headers: Record<string, string>, body: string | undefined): string {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return body === undefined ? `${head}\r\n` : `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
}

/**
 * One keep-alive HTTP/1.1 connection carrying one request at a time, each written as bytes and its
 * answer read by the status line and Content-Length alone: enough for Dispatch's JSON answers, at
 * about 0.6 of node:http's CPU a request.
 */
class RawConnection {
  readonly #socket: net.Socket;
  #buffer: Buffer = Buffer.alloc(0);
  #pending: { resolve: (answer: RawAnswer) => void; reject: (error: Error) => void } | undefined;
  readonly #idleMs: number;
  readonly #timeoutMs: number;

  constructor(url: URL, idleMs: number, timeoutMs: number) {
    this.#idleMs = idleMs;
    this.#timeoutMs = timeoutMs;
    this.#socket = net.connect({ host: url.hostname, port: Number(url.port) });
    this.#socket.setNoDelay(true);
    // Idle, the connection closes before the server's keep-alive timeout can close it under a
    // request; with a request under way, the request fails after timeoutMs without an answer.
    this.#socket.setTimeout(idleMs, () => this.#socket.destroy(this.#pending && new Error('timed out')));
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', (error) => this.#failPending(error));
    this.#socket.on('close', () => this.#failPending(Object.assign(new Error('the server closed the connection'), { code: 'ECONNRESET' })));
  }

  // Destroyed, not 'close' emitted: a socket destroyed by its idle timeout emits 'close' only later
  // in the event loop's turn, and a request handed to it meanwhile would fail with that close.
  get closed(): boolean {
    return this.#socket.destroyed;
  }

  get idle(): boolean {
    return !this.closed && !this.#pending;
  }

  request(head: string, body: string | undefined): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.#socket.setTimeout(this.#timeoutMs);
      this.#socket.write(body === undefined ? head : head + body);
    });
  }

  destroy(): void {
    this.#socket.destroy();
  }

  #failPending(error: Error): void {
    this.#pending?.reject(error);
    this.#pending = undefined;
  }

  #read(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const headerEnd = this.#buffer.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.#buffer.toString('latin1', 0, headerEnd);
    const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1];
    if (length === undefined) {
      this.#socket.destroy(new Error('an answer without Content-Length'));
      return;
    }
    const bodyEnd = headerEnd + HEADER_END.length + Number(length);
    if (this.#buffer.length < bodyEnd) return;
    const answer = { status: Number(head.slice(9, 12)), body: this.#buffer.toString('utf8', headerEnd + HEADER_END.length, bodyEnd) };
    this.#buffer = Buffer.alloc(0);
    const pending = this.#pending;
    this.#pending = undefined;
    if (/\r\nconnection:[ \t]*close/i.test(head)) {
      this.#socket.destroy();
    } else {
      this.#socket.setTimeout(this.#idleMs);
    }
    pending?.resolve(answer);
  }
}

interface WaitingRequest {
  head: string;
  body: string | undefined;
  resolve: (answer: RawAnswer) => void;
  reject: (error: Error) => void;
}

/** Up to `maxConnections` RawConnections to one origin; a request waits for an idle one. */
export class RawPool {
  readonly #url: URL;
  readonly #maxConnections: number;
  readonly #idleMs: number;
  readonly #timeoutMs: number;
  #connections: RawConnection[] = [];
  readonly #waiting: WaitingRequest[] = [];

  constructor(url: URL, options: { maxConnections: number; idleMs: number; timeoutMs: number }) {
    this.#url = url;
    this.#maxConnections = options.maxConnections;
    this.#idleMs = options.idleMs;
    this.#timeoutMs = options.timeoutMs;
  }

  /** Connections opened and not yet closed. */
  get connections(): number {
    return this.#connections.filter((connection) => !connection.closed).length;
  }

  request(head: string, body: string | undefined): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ head, body, resolve, reject });
      this.#pump();
    });
  }

  destroy(): void {
    for (const connection of this.#connections) connection.destroy();
  }

  #pump(): void {
    while (this.#waiting.length > 0) {
      let connection = this.#connections.find((candidate) => candidate.idle);
      if (!connection) {
        this.#connections = this.#connections.filter((candidate) => !candidate.closed);
        if (this.#connections.length >= this.#maxConnections) return;
        connection = new RawConnection(this.#url, this.#idleMs, this.#timeoutMs);
        this.#connections.push(connection);
      }
      const { head, body, resolve, reject } = this.#waiting.shift() as WaitingRequest;
      connection
        .request(head, body)
        .then(resolve, reject)
        .finally(() => this.#pump());
    }
  }
}
