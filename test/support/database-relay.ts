import { connect as connectTcp, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that can be cut, as a network outage or a database host
 * going away would: while it is down, every connection through it, open or new, is dropped.
 */
export class DatabaseRelay {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #down = false;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(target: { host: string; port: number }): Promise<DatabaseRelay> {
    const relay: DatabaseRelay = new DatabaseRelay(
      createServer((client) => {
        if (relay.#down) {
          client.destroy();
          return;
        }
        const upstream = connectTcp(target.port, target.host);
        for (const socket of [client, upstream]) {
          relay.#sockets.add(socket);
          socket.on('close', () => relay.#sockets.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      }),
    );
    await new Promise<void>((resolve) => relay.#server.listen(0, '127.0.0.1', resolve));
    return relay;
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  down(): void {
    this.#down = true;
    for (const socket of this.#sockets) socket.destroy();
  }

  up(): void {
    this.#down = false;
  }

  async close(): Promise<void> {
    this.down();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
