import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  rawBody: string;
  event: { id: string; type: string; data: Record<string, any> };
  receivedAt: number;
}

/** How the receiver answers the n-th request (0-based): a status, or 'hang' to never answer. */
export type Answer = number | 'hang';

/** A real HTTP server on 127.0.0.1 that plays an integrator's webhook endpoint. */
export class WebhookReceiver {
  readonly url: string;
  readonly received: ReceivedDelivery[] = [];
  private readonly server: Server;
  private answer: (index: number) => Answer = () => 200;
  private readonly hanging = new Set<ServerResponse>();

  private constructor(server: Server, url: string) {
    this.server = server;
    this.url = url;
  }

  static async start(): Promise<WebhookReceiver> {
    let receiver: WebhookReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => receiver?.handle(req.headers, Buffer.concat(chunks).toString('utf8'), res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
    return receiver;
  }

  answerWith(answer: Answer | ((index: number) => Answer)): void {
    this.answer = typeof answer === 'function' ? answer : () => answer;
  }

  private handle(headers: IncomingHttpHeaders, rawBody: string, res: ServerResponse): void {
    const index = this.received.length;
    this.received.push({ headers, rawBody, event: JSON.parse(rawBody), receivedAt: Date.now() });
    const answer = this.answer(index);
    if (answer === 'hang') {
      this.hanging.add(res);
      return;
    }
    res.writeHead(answer).end();
  }

  eventsOfType(type: string): ReceivedDelivery[] {
    return this.received.filter((delivery) => delivery.event.type === type);
  }

  async waitFor(predicate: (received: ReceivedDelivery[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.received)) {
      if (Date.now() > deadline) throw new Error(`the receiver did not get what was expected in time; it has ${this.received.length} deliveries: ${this.received.map((d) => d.event.type).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
