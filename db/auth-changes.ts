import { listenFor, type NotificationListener } from './notifications.ts';

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

/** Listens for announcements for as long as it runs, reconnecting `retryMs` after a loss (see listenFor). */
export function listenForAuthChanges(databaseUrl: string, handlers: AuthChangeHandlers, retryMs = 1000): Promise<NotificationListener> {
  return listenFor(databaseUrl, AUTH_CHANGES_CHANNEL, { onNotification: handlers.onChange, onReset: handlers.onReset, onLost: handlers.onLost }, retryMs);
}
