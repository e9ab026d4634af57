import type { RouteRow } from '../db/routes.ts';

export const covers = (route: Pick<RouteRow, 'prefixes'>, to: string): boolean =>
  route.prefixes.length === 0 || route.prefixes.some((prefix) => to.startsWith(prefix));

/**
 * The routes that may carry a message to `to`, in the order they are tried: the account's
 * active routes (already in priority order) that cover the number; with `onlyRouteId`, that
 * route alone, if it qualifies.
 */
export function routesFor(accountRoutes: RouteRow[], to: string, onlyRouteId?: number | null): RouteRow[] {
  return accountRoutes.filter((route) => covers(route, to) && (onlyRouteId == null || route.id === onlyRouteId));
}
