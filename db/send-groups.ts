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

/**
 * A send job's data: its messages, all of one account, and that account, so that the worker reads
 * the account's state and routes beside the messages rather than after them. Jobs that name no
 * account (reconciliation's) are read in turn.
 */
export type SendJobData = { message_ids: string[]; account_id?: string };
/** The fields of a send job's data that carry its messages' ids. */
export const SEND_JOB_FIELDS = ['message_ids'] as const;

/**
 * The send jobs of newly accepted messages: by first route, account and send time, at most
 * SEND_JOB_MESSAGES each. A scheduled message's job starts no earlier than its send time, so
 * that the messages due in one instant go out together.
 */
export function sendJobs(
  messages: { id: string; accountId: string; firstRouteId: number; sendAt: Date | null }[],
): { data: SendJobData; options: PerJobOptions }[] {
  const groups = new Map<string, { routeId: number; accountId: string; sendAt: Date | null; ids: string[] }>();
  for (const { id, accountId, firstRouteId, sendAt } of messages) {
    const key = `${firstRouteId} ${accountId} ${sendAt?.getTime() ?? ''}`;
    const group = groups.get(key);
    if (group) group.ids.push(id);
    else groups.set(key, { routeId: firstRouteId, accountId, sendAt, ids: [id] });
  }
  return [...groups.values()].flatMap(({ routeId, accountId, sendAt, ids }) =>
    Array.from({ length: Math.ceil(ids.length / SEND_JOB_MESSAGES) }, (_, chunk) => ({
      data: { message_ids: ids.slice(chunk * SEND_JOB_MESSAGES, (chunk + 1) * SEND_JOB_MESSAGES), account_id: accountId },
      options: { group: { id: `route-${routeId}` }, ...(sendAt && { startAfter: sendAt }) },
    })),
  );
}
