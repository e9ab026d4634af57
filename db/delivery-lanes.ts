import type { GroupConcurrencyConfig } from 'pg-boss';
import type { PerJobOptions } from './queues.ts';

/**
 * Where a delivery's job waits. Every job is grouped by its endpoint, so that pg-boss caps the
 * attempts to one endpoint in flight across every process. A prompt endpoint's jobs outrank one
 * on probation's, and only they are taken by the workers reserved for prompt endpoints
 * (jobs/deliver-webhook.ts).
 */
export type DeliveryLane = 'prompt' | 'probation';

export const LANE_PRIORITY: Record<DeliveryLane, number> = { prompt: 1, probation: 0 };

/**
 * Attempts in flight to one endpoint: a few while it answers promptly, one at a time on probation.
 * pg-boss counts active jobs as of each fetch, so workers fetching at the same instant may pass
 * a cap by one or two for an attempt: it bounds what an endpoint holds, it is no mutex.
 */
export const ENDPOINT_CONCURRENCY: GroupConcurrencyConfig = { default: 4, tiers: { probation: 1 } };

export const laneJobOptions = (endpointId: string, lane: DeliveryLane): PerJobOptions => ({
  group: lane === 'probation' ? { id: endpointId, tier: 'probation' } : { id: endpointId },
  priority: LANE_PRIORITY[lane],
});

/** The lane a fetched job was placed in. */
export const laneOfJob = (job: { groupTier?: string | null }): DeliveryLane => (job.groupTier === 'probation' ? 'probation' : 'prompt');
