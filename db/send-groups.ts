import type { PerJobOptions } from './queues.ts';

/**
 * Send jobs are grouped by the route a message is offered to first, and pg-boss caps the jobs
 * of one group in flight across every process: a route that hangs holds at most this many send
 * slots, each for at most its timeout, while other routes' messages go on. With 4 (when every
 * idle pg-boss worker fetched on each new job, so slots were costly) one route's submits queued
 * behind each other: `npm run bench -- --quick` saw the backlog grow at 86 sends a second.
 */
export const ROUTE_CONCURRENCY = 16;

export const sendJobOptions = (firstRouteId: number): PerJobOptions => ({ group: { id: `route-${firstRouteId}` } });
