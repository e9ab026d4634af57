import type { PerJobOptions } from './queues.ts';

/**
 * Send jobs are grouped by the route a message is offered to first, and pg-boss caps the jobs
 * of one group in flight across every process: a route that hangs holds at most this many send
 * slots, each for at most its timeout, while other routes' messages go on. With 4 (when every
 * idle pg-boss worker fetched on each new job, so slots were costly) one route's submits queued
 * behind each other: `npm run bench -- --quick` saw the backlog grow at 86 sends a second.
 */
export const ROUTE_CONCURRENCY = 16;

/**
 * Messages one send job carries, all offered first to the same route: a job's messages are
 * submitted at once, so a route has at most ROUTE_CONCURRENCY * SEND_JOB_MESSAGES in flight,
 * and the reads and writes around them are shared (domain/submission-batches.ts).
 */
export const SEND_JOB_MESSAGES = 16;

/** A send job's data: its messages. Jobs enqueued before jobs carried several had `message_id`. */
export type SendJobData = { message_ids: string[] } | { message_id: string };
export const SEND_JOB_FIELDS = ['message_ids', 'message_id'] as const;

export const messageIdsOf = (data: SendJobData): string[] => ('message_ids' in data ? data.message_ids : [data.message_id]);

/** The send jobs of newly accepted messages: by first route, at most SEND_JOB_MESSAGES each. */
export function sendJobs(messages: { id: string; firstRouteId: number }[]): { data: SendJobData; options: PerJobOptions }[] {
  const byRoute = new Map<number, string[]>();
  for (const { id, firstRouteId } of messages) {
    const ids = byRoute.get(firstRouteId);
    if (ids) ids.push(id);
    else byRoute.set(firstRouteId, [id]);
  }
  return [...byRoute].flatMap(([routeId, ids]) =>
    Array.from({ length: Math.ceil(ids.length / SEND_JOB_MESSAGES) }, (_, chunk) => ({
      data: { message_ids: ids.slice(chunk * SEND_JOB_MESSAGES, (chunk + 1) * SEND_JOB_MESSAGES) },
      options: { group: { id: `route-${routeId}` } },
    })),
  );
}
