import type { Knex } from 'knex';

export type ProviderName = 'simulator' | 'http' | 'smpp';

export interface RouteRow {
  id: number;
  name: string;
  provider: ProviderName;
  config: Record<string, unknown>;
  price_per_segment: string;
  prefixes: string[];
  is_active: boolean;
  dlr_token: string;
  created_at: Date;
}

export interface AssignmentRow {
  account_id: string;
  route_id: number;
  priority: number;
  created_at: Date;
}

export type RouteFields = Omit<RouteRow, 'id' | 'created_at' | 'dlr_token'>;

const serialise = (fields: Partial<RouteFields>) => (fields.config === undefined ? fields : { ...fields, config: JSON.stringify(fields.config) });

export async function insertRoute(db: Knex, route: RouteFields & { dlr_token: string }): Promise<RouteRow> {
  const [row] = await db<RouteRow>('routes').insert(serialise(route) as never).returning('*');
  return row;
}

export async function updateRoute(db: Knex, id: number, fields: Partial<RouteFields>): Promise<RouteRow | undefined> {
  const [row] = await db<RouteRow>('routes').where({ id }).update(serialise(fields) as never).returning('*');
  return row;
}

export async function findRoute(db: Knex, id: number): Promise<RouteRow | undefined> {
  return db<RouteRow>('routes').where({ id }).first();
}

export async function findRouteByDlrToken(db: Knex, token: string): Promise<RouteRow | undefined> {
  return db<RouteRow>('routes').where({ dlr_token: token }).first();
}

export async function listRoutes(db: Knex): Promise<RouteRow[]> {
  return db<RouteRow>('routes').orderBy('id');
}

/** Assigns a route to an account, or changes the priority of an existing assignment. */
export async function assignRoute(db: Knex, accountId: string, routeId: number, priority: number): Promise<AssignmentRow> {
  const [row] = await db('account_routes')
    .insert({ account_id: accountId, route_id: routeId, priority })
    .onConflict(['account_id', 'route_id'])
    .merge({ priority })
    .returning('*');
  return row;
}

export async function unassignRoute(db: Knex, accountId: string, routeId: number): Promise<boolean> {
  return (await db('account_routes').where({ account_id: accountId, route_id: routeId }).delete()) > 0;
}

/** The account's active assigned routes, in the order they are tried (ascending priority). */
export async function activeAccountRoutes(db: Knex, accountId: string): Promise<RouteRow[]> {
  return db<RouteRow>('routes as r')
    .join('account_routes as ar', 'ar.route_id', 'r.id')
    .where({ 'ar.account_id': accountId, 'r.is_active': true })
    .orderBy('ar.priority')
    .select('r.*');
}
