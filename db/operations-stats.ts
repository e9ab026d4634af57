import type { Knex } from 'knex';

/** Figures for the operator's dashboards, across every account. */

export async function recentMessagesByStatusAndRoute(db: Knex, hours: number): Promise<{ status: string; route_id: number | null; count: number }[]> {
  return db('messages')
    .where('created_at', '>', db.raw(`now() - make_interval(hours => ?)`, [hours]))
    .groupBy('status', 'route_id')
    .select('status', 'route_id', db.raw('count(*)::int AS count'));
}

export async function ledgerTotalsByKind(db: Knex): Promise<{ kind: string; total: string }[]> {
  return db('ledger_entries').groupBy('kind').select('kind', db.raw('sum(amount) AS total'));
}

/** Jobs waiting or running per queue, and the age in seconds of the oldest of them. */
export async function queueDepths(db: Knex, queues: string[]): Promise<{ name: string; state: string; count: number; oldest_seconds: number }[]> {
  const result = await db.raw(
    `SELECT name, state, count(*)::int AS count, coalesce(extract(epoch FROM now() - min(created_on)), 0)::float AS oldest_seconds
     FROM pgboss.job WHERE name = ANY(?) AND state IN ('created', 'retry', 'active') GROUP BY name, state`,
    [queues],
  );
  return result.rows;
}
