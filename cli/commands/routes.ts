// dispatch routes create|list|get|update|assign|unassign (admin API).
import { Command, Option } from 'commander';
import type { Route, RouteAssignment, UpdateRouteRequest } from '../admin-client.ts';
import { adminOptions, integer, jsonObject, list, number, run } from '../context.ts';
import { fields, table, UsageError } from '../output.ts';

const PROVIDERS = ['simulator', 'http', 'smpp'] as const;
type Provider = (typeof PROVIDERS)[number];

export const showRoute = (route: Route) =>
  fields([
    ['ID', route.id],
    ['Name', route.name],
    ['Provider', route.provider],
    ['Price/segment', route.price_per_segment],
    ['Prefixes', route.prefixes.length === 0 ? 'every destination' : route.prefixes],
    ['Active', route.is_active],
    ['Created', route.created_at],
  ]);

export const routeTable = (routes: Route[]) =>
  routes.length === 0
    ? 'No routes.'
    : table(
        ['ID', 'Name', 'Provider', 'Price/segment', 'Prefixes', 'Active', 'Created'],
        routes.map((route) => [
          route.id,
          route.name,
          route.provider,
          route.price_per_segment,
          route.prefixes.length === 0 ? 'all' : route.prefixes.join(', '),
          route.is_active ? 'yes' : 'no',
          route.created_at,
        ]),
      );

const showAssignment = (assignment: RouteAssignment) =>
  fields([
    ['Account', assignment.account_id],
    ['Route', assignment.route_id],
    ['Priority', assignment.priority],
    ['Created', assignment.created_at],
  ]);

const CONFIG_HELP = `JSON object (or @file) per provider:
  simulator {"outcome":"delivered"|"undelivered"|"rejected"|"unavailable","dlr_delay_ms":1000}
  http      {"url":"https://...","token":"...","timeout_ms":5000}
  smpp      {"host":"...","port":2775,"system_id":"...","password":"...","tls":true}`;

interface RouteFieldOptions {
  name?: string;
  provider?: Provider;
  config?: Record<string, unknown>;
  price?: number;
  prefixes?: string[];
}

export function routesCommand(): Command {
  const routes = new Command('routes').description('Manage upstream routes and their assignment to accounts (admin)');

  adminOptions(
    routes
      .command('create')
      .description('Create a route (it serves no account until assigned)')
      .requiredOption('--name <name>', 'unique route name')
      .addOption(new Option('--provider <provider>', 'upstream provider').choices(PROVIDERS).makeOptionMandatory())
      .requiredOption('--config <json>', 'provider configuration, a JSON object or @file (never shown again)', jsonObject)
      .requiredOption('--price <amount>', 'price per segment, >= 0', number)
      .option('--prefixes <list>', 'comma-separated E.164 prefixes, e.g. +44,+33 (default: every destination)', list)
      .option('--inactive', 'create the route inactive')
      .addHelpText('after', `\n--config: ${CONFIG_HELP}`),
  ).action((options: Required<Omit<RouteFieldOptions, 'prefixes'>> & { prefixes?: string[]; inactive?: boolean }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const route = await (
        await admin()
      ).createRoute({
        name: options.name,
        provider: options.provider,
        config: options.config,
        price_per_segment: options.price,
        ...(options.prefixes !== undefined && { prefixes: options.prefixes }),
        ...(options.inactive && { is_active: false }),
      });
      out.result(route, () => showRoute(route));
    }),
  );

  adminOptions(routes.command('list').description('List every route, active or not')).action((_options: object, command: Command) =>
    run(command, async ({ admin, out }) => {
      const routes = await (await admin()).listRoutes();
      out.result(routes, () => routeTable(routes.data));
    }),
  );

  adminOptions(routes.command('get').description('Show a route (its config is never returned)').argument('<route-id>', 'a route id (integer)')).action(
    (id: string, _options: object, command: Command) =>
      run(command, async ({ admin, out }) => {
        const route = await (await admin()).getRoute(id);
        out.result(route, () => showRoute(route));
      }),
  );

  adminOptions(
    routes
      .command('update')
      .description('Change a route: only the fields given change; a new --config replaces the old one whole')
      .argument('<route-id>', 'a route id (integer)')
      .option('--name <name>', 'new name')
      .addOption(new Option('--provider <provider>', 'new provider (requires --config)').choices(PROVIDERS))
      .option('--config <json>', 'new provider configuration, a JSON object or @file', jsonObject)
      .option('--price <amount>', 'new price per segment', number)
      .option('--prefixes <list>', "new comma-separated prefixes ('' for every destination)", list)
      .addOption(new Option('--active', 'put the route in service').conflicts('inactive'))
      .addOption(new Option('--inactive', 'take the route out of service at once'))
      .addHelpText('after', `\n--config: ${CONFIG_HELP}`),
  ).action((id: string, options: RouteFieldOptions & { active?: boolean; inactive?: boolean }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const body: UpdateRouteRequest = {
        ...(options.name !== undefined && { name: options.name }),
        ...(options.provider !== undefined && { provider: options.provider }),
        ...(options.config !== undefined && { config: options.config }),
        ...(options.price !== undefined && { price_per_segment: options.price }),
        ...(options.prefixes !== undefined && { prefixes: options.prefixes }),
        ...(options.active && { is_active: true }),
        ...(options.inactive && { is_active: false }),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError('nothing to update: give at least one of --name, --provider, --config, --price, --prefixes, --active, --inactive');
      const route = await (await admin()).updateRoute(id, body);
      out.result(route, () => showRoute(route));
    }),
  );

  adminOptions(
    routes
      .command('assign')
      .description("Assign a route to an account, or change its priority (an account's priorities are unique)")
      .argument('<account-id>', 'acct_...')
      .argument('<route-id>', 'a route id (integer)')
      .requiredOption('--priority <n>', 'lower is tried first', integer),
  ).action((accountId: string, routeId: string, options: { priority: number }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const assignment = await (await admin()).assignRoute(accountId, routeId, options.priority);
      out.result(assignment, () => showAssignment(assignment));
    }),
  );

  adminOptions(
    routes
      .command('unassign')
      .description('Remove a route from an account')
      .argument('<account-id>', 'acct_...')
      .argument('<route-id>', 'a route id (integer)'),
  ).action((accountId: string, routeId: string, _options: object, command: Command) =>
    run(command, async ({ admin, out }) => {
      const deleted = await (await admin()).unassignRoute(accountId, routeId);
      out.result(deleted, () => `Route ${routeId} is no longer assigned to ${accountId}.`);
    }),
  );

  return routes;
}
