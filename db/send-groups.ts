import type { PerJobOptions } from './queues.ts';

/**
 * Send jobs are grouped by the route a message is offered to first, and pg-boss caps the jobs
 * of one group in flight across every process: a route that hangs holds at most this many send
 * workers, each for at most its timeout, while other routes' messages go on.
 */
export const ROUTE_CONCURRENCY = 16;

export const sendJobOptions = (firstRouteId: number): PerJobOptions => ({ group: { id: `route-${firstRouteId}` } });
