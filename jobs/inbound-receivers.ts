import type { Knex } from 'knex';
import { listRoutes } from '../db/routes.ts';
import type { ProviderPool } from './provider-pool.ts';

/**
 * Binds every active SMPP route now and, every `intervalMs`, any route created or enabled since,
 * in every process: an SMSC may deliver a route's inbound messages on any of its binds. Returns
 * the function that stops it.
 */
export function startInboundReceivers(db: Knex, providers: ProviderPool, intervalMs: number, onError: (error: Error) => void): () => void {
  const refresh = () => listRoutes(db).then((routes) => providers.bindReceivers(routes), onError);
  void refresh();
  const timer = setInterval(() => void refresh(), intervalMs);
  return () => clearInterval(timer);
}
