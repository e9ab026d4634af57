import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  event: { id: string; type: string; data: Record<string, unknown> };
  receivedAt: number;
  /** Its place among the requests every receiver of this process has read: an order that no clock can tie. */
  sequence: number;
}

let requestsRead = 0;

/**
 * How the receiver answers the n-th request (0-based):
 * - a status (a 3xx carries a Location elsewhere);
 * - 'hang': read the request and never answer, until `release()` or `stop()`;
 * - 'stall': send 200 and part of the body, then nothing more, until `release()` or `stop()`;
 * - 'close-mid-body': send 200 and part of a promised body, then close the connection;
 * - { status, afterMs }: answer with the status once afterMs has passed.
 */
export type Answer = number | 'hang' | 'stall' | 'close-mid-body' | { status: number; afterMs: number };

/** A real HTTP server on 127.0.0.1 that plays an integrator's webhook endpoint. */
export class WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedDelivery[] = [];
  private open = 0;
  private readonly server: Server;
  private answer: (index: number) => Answer = () => 200;
  private readonly held = new Set<ServerResponse>();

  private constructor(server: Server, url: string) {
    this.server = server;
    this.url = url;
  }

  static async start(): Promise<WebhookReceiver> {
    // Requests reach the handler only once the server listens, after `receiver` is made.
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver.handle(req.headers, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    return receiver;
  }

  answerWith(answer: Answer | ((index: number) => Answer)): void {
    this.answer = typeof answer === 'function' ? answer : () => answer;
  }

  /** Requests read and not yet answered or cut. */
  get openRequests(): number {
    return this.open;
  }

  private handle(headers: IncomingHttpHeaders, rawBody: string, res: ServerResponse): void {
    const index = this.received.length;
    this.received.push({ headers, rawBody, event: JSON.parse(rawBody), receivedAt: Date.now(), sequence: ++requestsRead });
    this.open += 1;
    res.on('close', () => {
      this.open -= 1;
      this.held.delete(res);
    });
    const answer = this.answer(index);
    if (answer === 'hang') {
      this.held.add(res);
    } else if (answer === 'stall') {
      this.held.add(res);
      res.writeHead(200, { 'Content-Length': '1000' }).write('partial');
    } else if (answer === 'close-mid-body') {
      res.writeHead(200, { 'Content-Length': '1000' }).write('partial', () => res.destroy());
    } else if (typeof answer === 'object') {
      setTimeout(() => res.writeHead(answer.status).end(), answer.afterMs);
    } else {
      res.writeHead(answer, answer >= 300 && answer < 400 ? { Location: 'http://127.0.0.1:9/elsewhere' } : {}).end();
    }
  }

  /** Ends every held request ('hang' and 'stall') by closing its connection. */
  release(): void {
    for (const res of this.held) res.destroy();
  }

  eventsOfType(type: string): ReceivedDelivery[] {
    return this.received.filter((delivery) => delivery.event.type === type);
  }

  async waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline)
        throw new Error(
          `the receiver did not get what was expected in time; it has ${this.received.length} deliveries: ${this.received.map((d) => d.event.type).join(', ')}`,
        );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
