import type { Knex } from 'knex';

/** Figures for the operator's dashboards, across every account. */

/** Messages created in the last `hours`, by status and route name ('none' before a route took them). */
export async function recentMessagesByStatusAndRoute(db: Knex, hours: number): Promise<{ status: string; route: string; count: number }[]> {
  return db('messages as m')
    .leftJoin('routes as r', 'r.id', 'm.route_id')
    .where('m.created_at', '>', db.raw(`now() - make_interval(hours => ?)`, [hours]))
    .groupBy('m.status', 'r.name')
    .select('m.status', db.raw(`coalesce(r.name, 'none') AS route`), db.raw('count(*)::int AS count'));
}

/** Ledger sums per kind and currency: amounts in different currencies never add up. */
export async function ledgerTotalsByKindAndCurrency(db: Knex): Promise<{ kind: string; currency: string; total: string }[]> {
  return db('ledger_entries as l')
    .join('accounts as a', 'a.id', 'l.account_id')
    .groupBy('l.kind', 'a.currency')
    .select('l.kind', 'a.currency', db.raw('sum(l.amount) AS total'));
}

/** Every route's id and name: metrics label routes by name, and show the quiet ones at 0. */
export async function routeNames(db: Knex): Promise<{ id: number; name: string }[]> {
  return db('routes').orderBy('id').select('id', 'name');
}

/** Webhook endpoints not deleted, by whether they are active or were disabled. */
export async function webhookEndpointsByState(db: Knex): Promise<{ state: 'active' | 'disabled'; count: number }[]> {
  return db('webhook_endpoints')
    .whereNull('deleted_at')
    .groupBy('is_active')
    .select(db.raw(`CASE WHEN is_active THEN 'active' ELSE 'disabled' END AS state`), db.raw('count(*)::int AS count'));
}
