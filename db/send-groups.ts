import type { PerJobOptions } from './queues.ts';

/**
 * Send jobs are grouped by the route a message is offered to first, and pg-boss caps the jobs
 * of one group in flight across every process: a route that hangs holds at most this many send
 * workers, each for at most its timeout, while other routes' messages go on. Small on purpose:
 * pg-boss wakes every idle worker of a queue on each new job, so each worker costs a fetch per
 * accepted message (32 workers took accepted sends from 85 to 40 a second in `npm run bench`).
 */
export const ROUTE_CONCURRENCY = 4;

export const sendJobOptions = (firstRouteId: number): PerJobOptions => ({ group: { id: `route-${firstRouteId}` } });
