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

/**
 * Seconds from sent to delivered of the messages delivery reports name (directly or through
 * one of their parts), keyed `<route id>:<provider message id>`: only those already delivered.
 */
export async function sentToDeliveredSecondsOf(db: Knex, upstreamIds: { routeId: number; providerMessageId: string }[]): Promise<Map<string, number>> {
  const { rows } = await db.raw(
    `WITH v AS (SELECT * FROM unnest(?::integer[], ?::text[]) AS v (route_id, provider_message_id)),
     carried AS (
       SELECT v.route_id, v.provider_message_id, m.id FROM v JOIN messages m ON m.route_id = v.route_id AND m.provider_message_id = v.provider_message_id
       UNION ALL SELECT v.route_id, v.provider_message_id, p.message_id FROM v JOIN message_parts p ON p.route_id = v.route_id AND p.provider_message_id = v.provider_message_id)
     SELECT c.route_id, c.provider_message_id, extract(epoch FROM m.delivered_at - m.sent_at)::float AS seconds
     FROM carried c JOIN messages m ON m.id = c.id WHERE m.status = 'delivered' AND m.sent_at IS NOT NULL`,
    [upstreamIds.map(({ routeId }) => routeId), upstreamIds.map(({ providerMessageId }) => providerMessageId)],
  );
  return new Map(rows.map((row: { route_id: number; provider_message_id: string; seconds: number }) => [`${row.route_id}:${row.provider_message_id}`, row.seconds]));
}

/**
 * Jobs waiting or running per queue, and in seconds how long the oldest of them has waited since
 * it became due (created, retry) or run since it started (active). A job scheduled for later
 * (a webhook retry hours away) is counted but is not late: its wait starts when it is due.
 */
export async function queueDepths(db: Knex, queues: string[]): Promise<{ name: string; state: string; count: number; oldest_seconds: number }[]> {
  const result = await db.raw(
    `SELECT name, state, count(*)::int AS count,
       coalesce(extract(epoch FROM now() - min(CASE WHEN state = 'active' THEN coalesce(started_on, created_on) ELSE start_after END)
         FILTER (WHERE state = 'active' OR start_after <= now())), 0)::float AS oldest_seconds
     FROM pgboss.job WHERE name = ANY(?) AND state IN ('created', 'retry', 'active') GROUP BY name, state`,
    [queues],
  );
  return result.rows;
}
