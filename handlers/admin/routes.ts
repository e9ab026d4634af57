import { findAssignment, listRoutes, type RouteRow } from '../../db/routes.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { assign, changeRoute, createRoute, getRoute, unassign } from '../../domain/routes.ts';
import { deleted, toRoute, toRouteAssignment } from '../representations.ts';
import type { AdminHandler, Schemas } from '../types.ts';

/** A route as the audit log keeps it: as shown, less its inbound URL, which carries the route's secret token. */
function auditedRoute(row: RouteRow): Omit<Schemas['Route'], 'inbound_url'> {
  const shown: Partial<Schemas['Route']> = toRoute(row, () => '');
  delete shown.inbound_url;
  return shown as Omit<Schemas['Route'], 'inbound_url'>;
}

export const adminCreateRoute: AdminHandler<'adminCreateRoute'> = async ({ body }, { services, caller }) => {
  const route = await auditedWrite(services.db, caller.operator, async (trx) => {
    const created = await createRoute(trx, body);
    return {
      result: created,
      entry: { action: 'route.create', target_type: 'route', target_id: String(created.id), before: null, after: auditedRoute(created) },
    };
  });
  return { status: 201, data: toRoute(route, services.inboundUrl) };
};

export const adminListRoutes: AdminHandler<'adminListRoutes'> = async (_request, { services }) => ({
  status: 200,
  data: { object: 'list', data: (await listRoutes(services.db)).map((route) => toRoute(route, services.inboundUrl)) },
});

export const adminGetRoute: AdminHandler<'adminGetRoute'> = async ({ params }, { services }) => ({
  status: 200,
  data: toRoute(await getRoute(services.db, params.id), services.inboundUrl),
});

export const adminUpdateRoute: AdminHandler<'adminUpdateRoute'> = async ({ params, body }, { services, caller }) => {
  const route = await auditedWrite(services.db, caller.operator, async (trx) => {
    const before = await getRoute(trx, params.id);
    const after = await changeRoute(trx, params.id, body);
    return {
      result: after,
      entry: { action: 'route.update', target_type: 'route', target_id: String(after.id), before: auditedRoute(before), after: auditedRoute(after) },
    };
  });
  return { status: 200, data: toRoute(route, services.inboundUrl) };
};

// Assignments are recorded against their account: "what changed for this account" is the question.
export const adminAssignRoute: AdminHandler<'adminAssignRoute'> = async ({ params, body }, { services, caller }) => {
  const assignment = await auditedWrite(services.db, caller.operator, async (trx) => {
    const before = await findAssignment(trx, params.id, params.route_id);
    const after = await assign(trx, params.id, params.route_id, body.priority);
    const entry = {
      action: 'route.assign',
      target_type: 'account',
      target_id: params.id,
      before: before ? toRouteAssignment(before) : null,
      after: toRouteAssignment(after),
    };
    return { result: after, entry };
  });
  return { status: 200, data: toRouteAssignment(assignment) };
};

export const adminUnassignRoute: AdminHandler<'adminUnassignRoute'> = async ({ params }, { services, caller }) => {
  await auditedWrite(services.db, caller.operator, async (trx) => {
    const removed = await unassign(trx, params.id, params.route_id);
    return {
      result: removed,
      entry: { action: 'route.unassign', target_type: 'account', target_id: params.id, before: toRouteAssignment(removed), after: null },
    };
  });
  return { status: 200, data: deleted(String(params.route_id), 'route_assignment') };
};
