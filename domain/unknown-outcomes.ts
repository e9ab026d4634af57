import type { RouteRow } from '../db/routes.ts';

/**
 * What to do after an upstream may have taken a message without saying so (operator contract,
 * "unknown outcome"). A second submit anywhere may be a second SMS to the same person, so by
 * default the message fails; a route whose provider dedupes on Idempotency-Key is retried under
 * the same key, and never another route; a route whose operator prefers speed to the risk of a
 * duplicate fails over as after a retryable error.
 */
export type UnknownOutcomeRule = 'fail' | 'retry_same_route' | 'fail_over';

export function afterUnknownOutcome(route: Pick<RouteRow, 'config'> | undefined): UnknownOutcomeRule {
  if (route?.config.idempotent === true) return 'retry_same_route';
  if (route?.config.failover_on_timeout === true) return 'fail_over';
  return 'fail';
}

/** The error of a message failed after an unknown outcome: it says the upstream may have sent it. */
export function unknownOutcomeError(routeId: number, detail: string) {
  return {
    type: 'provider_error' as const,
    code: 'provider_timeout',
    message: `Route ${routeId} did not confirm the message (${detail}); it may still have been sent, so it was not submitted again.`,
  };
}
