import type { GroupConcurrencyConfig } from 'pg-boss';
import type { PerJobOptions } from '../db/queues.ts';
import type { TurnOptions } from '../db/pg-boss-internals.ts';
import type { EndpointRow } from '../db/webhooks.ts';

/**
 * Where a delivery's job waits, decided by how its endpoint's attempts have ended. Every job is
 * grouped by its endpoint, so that its attempts in flight are capped across every process.
 * - `prompt`: its last attempt ended within half the deadline; up to 4 attempts at once, on
 *   any worker, first.
 * - `new`: it has never been attempted. It has shown nothing to be held against it, so it goes
 *   before every endpoint on probation, one attempt at a time until its first attempt ends. It
 *   is kept off the workers reserved for prompt endpoints, so that a burst of new endpoints that
 *   hang cannot delay a prompt one.
 * - `probation`: its last attempt was slow or never answered; one attempt at a time, after the
 *   others, never on the reserved workers (jobs/deliver-webhook.ts).
 * What an endpoint takes from the others is the time its attempts hold a worker, so that, not
 * its answers, decides its lane.
 */
export type DeliveryLane = 'prompt' | 'new' | 'probation';

export const LANE_PRIORITY: Record<DeliveryLane, number> = { prompt: 1, new: 0, probation: -1 };

/**
 * Attempts in flight to one endpoint, by lane. The workers take turns by endpoint and then by
 * account (fetchInTurn, db/pg-boss-internals.ts), so one account's many endpoints never keep another's waiting.
 */
const ENDPOINT_CONCURRENCY: GroupConcurrencyConfig = { default: 4, tiers: { new: 1, probation: 1 } };

/** How the webhook workers take their turns: by endpoint (the job's group), then by account. */
export const DELIVERY_TURNS: TurnOptions = { groupConcurrency: ENDPOINT_CONCURRENCY, ownerField: 'account_id' };

export type LaneStanding = Pick<EndpointRow, 'prompt_since' | 'last_success_at' | 'last_failure_at'>;

export function laneOf(endpoint: LaneStanding): DeliveryLane {
  if (endpoint.prompt_since !== null) return 'prompt';
  return endpoint.last_success_at === null && endpoint.last_failure_at === null ? 'new' : 'probation';
}

export const laneJobOptions = (endpointId: string, lane: DeliveryLane): PerJobOptions => ({
  group: lane === 'prompt' ? { id: endpointId } : { id: endpointId, tier: lane },
  priority: LANE_PRIORITY[lane],
});

/** The lane a fetched job was placed in. */
export const laneOfJob = (job: { groupTier?: string | null }): DeliveryLane =>
  job.groupTier === 'probation' || job.groupTier === 'new' ? job.groupTier : 'prompt';
