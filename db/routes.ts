import type { Knex } from 'knex';
import { pooledBatcher, runPrepared } from './statements.ts';

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

/** Every column of routes, for the prepared statements (test/db/table-columns.test.ts keeps it whole). */
export const ROUTE_COLUMNS = ['id', 'name', 'provider', 'config', 'price_per_segment', 'prefixes', 'is_active', 'dlr_token', 'created_at'] as const;
/** ROUTE_COLUMNS of the alias `r`, for a statement's select list. */
export const routeColumns = ROUTE_COLUMNS.map((column) => `r.${column}`).join(', ');

export type RouteFields = Omit<RouteRow, 'id' | 'created_at' | 'dlr_token'>;

const serialise = (fields: Partial<RouteFields>) => (fields.config === undefined ? fields : { ...fields, config: JSON.stringify(fields.config) });

export async function insertRoute(db: Knex, route: RouteFields & { dlr_token: string }): Promise<RouteRow> {
  const [row] = await db<RouteRow>('routes')
    .insert(serialise(route) as never)
    .returning('*');
  return row;
}

export async function updateRoute(db: Knex, id: number, fields: Partial<RouteFields>): Promise<RouteRow | undefined> {
  const [row] = await db<RouteRow>('routes')
    .where({ id })
    .update(serialise(fields) as never)
    .returning('*');
  return row;
}

export async function findRoute(db: Knex, id: number): Promise<RouteRow | undefined> {
  return db<RouteRow>('routes').where({ id }).first();
}

// Read for every delivery report and inbound message an upstream posts: reports arriving together share a statement.
const routeLookupsByToken = pooledBatcher(async (db, tokens: string[]): Promise<(RouteRow | undefined)[]> => {
  const rows = await runPrepared<RouteRow>(db, {
    name: 'routes-by-dlr-tokens',
    text: `SELECT ${routeColumns} FROM routes r WHERE r.dlr_token = ANY ($1::text[])`,
    values: [tokens],
  });
  const byToken = new Map(rows.map((row) => [row.dlr_token, row]));
  return tokens.map((token) => byToken.get(token));
});

/**
 * The route whose callback URLs carry this token, as it is now. A token with NUL, which no text
 * column holds, is answered at once: sent to the database it would fail the statement, and with
 * it the reports that share it.
 */
export async function findRouteByDlrToken(db: Knex, token: string): Promise<RouteRow | undefined> {
  if (token.includes('\u0000')) return undefined;
  return routeLookupsByToken(db).submit(token);
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
    .returning<AssignmentRow[]>('*');
  return row;
}

export async function findAssignment(db: Knex, accountId: string, routeId: number): Promise<AssignmentRow | undefined> {
  return db<AssignmentRow>('account_routes').where({ account_id: accountId, route_id: routeId }).first();
}

/** Answers the assignment it removed, if there was one. */
export async function unassignRoute(db: Knex, accountId: string, routeId: number): Promise<AssignmentRow | undefined> {
  const [row] = await db<AssignmentRow>('account_routes').where({ account_id: accountId, route_id: routeId }).delete().returning('*');
  return row;
}

/** What the send worker needs of an account: whether it may send, and its active routes in the order they are tried. */
export interface AccountSendingState {
  active: boolean;
  routes: RouteRow[];
}

// One statement for both: a route column is null on the one row of an account without active routes.
const SENDING_STATE_OF_ACCOUNTS = `
  SELECT a.id AS account_id, a.status = 'active' AS account_active, ${routeColumns}
  FROM accounts a LEFT JOIN (account_routes ar JOIN routes r ON r.id = ar.route_id AND r.is_active) ON ar.account_id = a.id
  WHERE a.id = ANY($1::text[]) ORDER BY a.id, ar.priority`;

/** Each account's sending state, in the order of the ids given; an account that does not exist may not send. */
export async function sendingStateOfAccounts(db: Knex, accountIds: string[]): Promise<AccountSendingState[]> {
  const rows = await runPrepared<RouteRow & { account_id: string; account_active: boolean }>(db, {
    name: 'sending-state-of-accounts',
    text: SENDING_STATE_OF_ACCOUNTS,
    values: [accountIds],
  });
  const states = new Map<string, AccountSendingState>(accountIds.map((id) => [id, { active: false, routes: [] }]));
  for (const { account_id: accountId, account_active: active, ...route } of rows) {
    const state = states.get(accountId) as AccountSendingState;
    state.active = active;
    if (route.id !== null) state.routes.push(route);
  }
  return accountIds.map((id) => states.get(id) as AccountSendingState);
}

/** Every route assigned to the account, active or not, with its assignment, in failover order. */
export async function assignedRoutes(db: Knex, accountId: string): Promise<(RouteRow & { priority: number; assigned_at: Date })[]> {
  return db<RouteRow>('routes as r')
    .join('account_routes as ar', 'ar.route_id', 'r.id')
    .where({ 'ar.account_id': accountId })
    .orderBy('ar.priority')
    .select('r.*', 'ar.priority', 'ar.created_at as assigned_at');
}
