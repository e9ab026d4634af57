import pg from 'pg';

/** Where the database announces, by account id, a change to an account or one of its keys (see the migration announce_auth_changes). */
export const AUTH_CHANGES_CHANNEL = 'dispatch_auth_changes';

export interface AuthChangeHandlers {
  /** The account, or one of its keys, changed in a transaction that has committed. */
  onChange: (accountId: string) => void;
  /** Announcements may have been missed: the connection was lost, or it has just started listening again. */
  onReset: () => void;
  /** The connection was lost or could not be opened; called once per loss, not per retry. */
  onLost: (error: unknown) => void;
}

export interface AuthChangeListener {
  stop: () => Promise<void>;
}

/**
 * Listens for announcements on a connection of its own, outside any pool, and opens a new one
 * `retryMs` after losing it, for as long as it runs. Resolves once the first attempt to listen
 * succeeded or failed (then it goes on retrying).
 */
export async function listenForAuthChanges(databaseUrl: string, handlers: AuthChangeHandlers, retryMs = 1000): Promise<AuthChangeListener> {
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
    const client = new pg.Client({ connectionString: databaseUrl, application_name: 'dispatch-auth-changes', connectionTimeoutMillis: 5000, keepAlive: true });
    current = client;
    client.on('error', (error) => lose(client, error));
    client.on('end', () => lose(client, new Error('the connection listening for key and account changes ended')));
    client.on('notification', ({ channel, payload }) => {
      if (channel === AUTH_CHANGES_CHANNEL && payload && client === current) handlers.onChange(payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${AUTH_CHANGES_CHANNEL}`);
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
