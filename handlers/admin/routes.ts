import { listRoutes } from '../../db/routes.ts';
import { assign, changeRoute, createRoute, getRoute, unassign } from '../../domain/routes.ts';
import { deleted, toRoute, toRouteAssignment } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminCreateRoute: AdminHandler<'adminCreateRoute'> = async ({ body }, { services }) => ({
  status: 201,
  data: toRoute(await createRoute(services.db, body), services.inboundUrl),
});

export const adminListRoutes: AdminHandler<'adminListRoutes'> = async (_request, { services }) => ({
  status: 200,
  data: { object: 'list', data: (await listRoutes(services.db)).map((route) => toRoute(route, services.inboundUrl)) },
});

export const adminGetRoute: AdminHandler<'adminGetRoute'> = async ({ params }, { services }) => ({
  status: 200,
  data: toRoute(await getRoute(services.db, params.id), services.inboundUrl),
});

export const adminUpdateRoute: AdminHandler<'adminUpdateRoute'> = async ({ params, body }, { services }) => ({
  status: 200,
  data: toRoute(await changeRoute(services.db, params.id, body), services.inboundUrl),
});

export const adminAssignRoute: AdminHandler<'adminAssignRoute'> = async ({ params, body }, { services }) => ({
  status: 200,
  data: toRouteAssignment(await assign(services.db, params.id, params.route_id, body.priority)),
});

export const adminUnassignRoute: AdminHandler<'adminUnassignRoute'> = async ({ params }, { services }) => {
  await unassign(services.db, params.id, params.route_id);
  return { status: 200, data: deleted(String(params.route_id), 'route_assignment') };
};
