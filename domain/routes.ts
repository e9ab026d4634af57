import type { Knex } from 'knex';
import { findAccount } from '../db/accounts.ts';
import { isUniqueViolation } from '../db/constraints.ts';
import { assignRoute, findRoute, insertRoute, unassignRoute, updateRoute, type AssignmentRow, type RouteFields, type RouteRow } from '../db/routes.ts';
import { checkProviderConfig, type ProviderName } from '../providers/index.ts';
import { conflict, invalidRequest, missingParameter, notFound } from './errors.ts';
import { randomBase62 } from './ids.ts';
import { hasAtMostFourDecimals, toDecimal } from './money.ts';

export interface RouteRequest {
  name?: string;
  provider?: ProviderName;
  config?: Record<string, unknown>;
  price_per_segment?: number;
  prefixes?: string[];
  is_active?: boolean;
}

function checkConfig(provider: ProviderName, config: unknown): void {
  const problem = checkProviderConfig(provider, config);
  if (problem) throw invalidRequest(problem.param, problem.message);
}

function fieldsOf({ price_per_segment, ...rest }: RouteRequest): Partial<RouteFields> {
  if (price_per_segment === undefined) return rest;
  if (!hasAtMostFourDecimals(price_per_segment)) throw invalidRequest('price_per_segment', 'price_per_segment has at most four decimal places.');
  return { ...rest, price_per_segment: toDecimal(price_per_segment) };
}

async function saving<T>(write: () => Promise<T>, name: string | undefined): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error, 'routes_name_key')) throw conflict(`A route named '${name}' already exists.`, 'conflict', 'name');
    throw error;
  }
}

export async function createRoute(
  db: Knex,
  request: Required<Pick<RouteRequest, 'name' | 'provider' | 'config' | 'price_per_segment'>> & RouteRequest,
): Promise<RouteRow> {
  checkConfig(request.provider, request.config);
  const fields = { prefixes: [], is_active: true, ...fieldsOf(request) } as RouteFields;
  // The delivery-report URL of a route carries this secret, so that only its provider can post to it.
  return saving(() => insertRoute(db, { ...fields, dlr_token: randomBase62(32) }), request.name);
}

export async function changeRoute(db: Knex, id: number, request: RouteRequest): Promise<RouteRow> {
  const route = await findRoute(db, id);
  if (!route) throw notFound('route', id);
  if (request.provider !== undefined && request.provider !== route.provider && request.config === undefined) throw missingParameter('config');
  if (request.config !== undefined) checkConfig(request.provider ?? route.provider, request.config);
  const updated = await saving(() => updateRoute(db, id, fieldsOf(request)), request.name);
  if (!updated) throw notFound('route', id);
  return updated;
}

export async function getRoute(db: Knex, id: number): Promise<RouteRow> {
  const route = await findRoute(db, id);
  if (!route) throw notFound('route', id);
  return route;
}

export async function assign(db: Knex, accountId: string, routeId: number, priority: number): Promise<AssignmentRow> {
  if (!(await findAccount(db, accountId))) throw notFound('account', accountId);
  await getRoute(db, routeId);
  try {
    return await assignRoute(db, accountId, routeId, priority);
  } catch (error) {
    if (isUniqueViolation(error, 'account_routes_account_id_priority_key')) {
      throw conflict(`Another route of this account already has priority ${priority}.`, 'conflict', 'priority');
    }
    throw error;
  }
}

export async function unassign(db: Knex, accountId: string, routeId: number): Promise<AssignmentRow> {
  const removed = await unassignRoute(db, accountId, routeId);
  if (!removed) throw notFound('route assignment', routeId);
  return removed;
}
