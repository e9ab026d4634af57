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

export async function insertRoute(db: Knex, route: Omit<RouteRow, 'id' | 'created_at'>): Promise<RouteRow> {
  const [row] = await db<RouteRow>('routes')
    .insert({ ...route, config: JSON.stringify(route.config) } as never)
    .returning('*');
  return row;
}

/** Assigns a route to an account, or changes the priority of an existing assignment. */
export async function assignRoute(db: Knex, accountId: string, routeId: number, priority: number) {
  const [row] = await db('account_routes')
    .insert({ account_id: accountId, route_id: routeId, priority })
    .onConflict(['account_id', 'route_id'])
    .merge({ priority })
    .returning('*');
  return row as { account_id: string; route_id: number; priority: number; created_at: Date };
}
