import pg from 'pg';

export interface NotificationHandlers {
  /** A notification on the channel, from a transaction that has committed. */
  onNotification: (payload: string) => void;
  /** Notifications may have been missed: the connection was lost, or it has just started listening again. */
  onReset: () => void;
  /** The connection was lost or could not be opened; called once per loss, not per retry. */
  onLost: (error: unknown) => void;
}

export interface NotificationListener {
  stop: () => Promise<void>;
}

/**
 * Listens on `channel` on a connection of its own, outside any pool, and opens a new one
 * `retryMs` after losing it, for as long as it runs. Resolves once the first attempt to listen
 * succeeded or failed (then it goes on retrying).
 */
export async function listenFor(databaseUrl: string, channel: string, handlers: NotificationHandlers, retryMs = 1000): Promise<NotificationListener> {
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  let reportedLoss = false;

  const lose = (client: pg.Client, error: unknown) => {
    if (client !== current) return;
    current = undefined;
    client.end().catch(() => {});
    handlers.onReset();
    if (stopped) return;
    if (!reportedLoss) handlers.onLost(error);
    reportedLoss = true;
    retry = setTimeout(() => void listen(), retryMs);
  };

  const listen = async () => {
    const client = new pg.Client({
      connectionString: databaseUrl,
      application_name: channel.replaceAll('_', '-'),
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    });
    current = client;
    client.on('error', (error) => lose(client, error));
    client.on('end', () => lose(client, new Error(`the connection listening on ${channel} ended`)));
    client.on('notification', (notification) => {
      if (notification.channel === channel && notification.payload && client === current) handlers.onNotification(notification.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${channel}`);
    } catch (error) {
      lose(client, error);
      return;
    }
    if (client !== current) {
      // Stopped, or lost, while connecting.
      await client.end().catch(() => {});
      return;
    }
    reportedLoss = false;
    handlers.onReset();
  };

  await listen();
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => {});
    },
  };
}
