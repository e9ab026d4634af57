import type { Knex } from 'knex';
import { settleSubmission, submissionsOf, type SubmissionRow } from '../db/message-attempts.ts';
import type { MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { findRoute, type RouteRow } from '../db/routes.ts';
import type { OutboundMessage, Provider, SubmitOutcome } from '../providers/index.ts';
import { planSegments } from './encoding.ts';
import { chargeForRoute, recordFailure } from './message-outcomes.ts';
import { compare, multiply } from './money.ts';
import { retryOnOutage } from './retry-on-outage.ts';
import { routesFor } from './routing.ts';
import type { SubmissionBatches } from './submission-batches.ts';
import { afterUnknownOutcome, unknownOutcomeError } from './unknown-outcomes.ts';

/** How long Dispatch keeps offering a message that every route refused for now, from its send time or acceptance. */
export const SEND_WINDOW_MS = 15 * 60_000;

export interface SubmitDependencies {
  db: Knex;
  jobs: JobQueue;
  providers: { get(route: RouteRow): Provider };
  /** The reads and writes shared by the messages this process has in flight. */
  batches: SubmissionBatches;
  /** Every submission to an upstream, for metrics and for the log of failed ones. */
  onSubmit?: (route: RouteRow, messageId: string, outcome: SubmitOutcome, durationMs: number) => void;
  /** A message given up on: it failed and was refunded (logged once, for the operator). */
  onFailed?: (messageId: string, error: MessageError) => void;
}

type MessageError = NonNullable<MessageRow['error']>;

const DIED_MID_SUBMIT = 'Dispatch stopped before the upstream answered';

/**
 * Settles what earlier tries left behind and answers the routes this try may use, or an error
 * to fail the message with. A submission still 'submitting' belongs to a process that died
 * between writing to the upstream and recording its answer: an unknown outcome, by the rules.
 */
async function routesAfterEarlierTries(db: Knex, earlier: SubmissionRow[], routes: RouteRow[]): Promise<RouteRow[] | { failWith: MessageError }> {
  let allowed = routes;
  for (const submission of earlier) {
    if (submission.outcome === 'submitting') {
      await settleSubmission(db, submission.id, { outcome: 'unknown', errorCode: 'provider_timeout', errorMessage: DIED_MID_SUBMIT });
    } else if (submission.outcome !== 'unknown') {
      continue;
    }
    const route = routes.find((candidate) => candidate.id === submission.route_id) ?? (await findRoute(db, submission.route_id));
    const rule = afterUnknownOutcome(route);
    if (rule === 'fail')
      return { failWith: unknownOutcomeError(submission.route_id, submission.outcome === 'submitting' ? DIED_MID_SUBMIT.toLowerCase() : 'no answer') };
    if (rule === 'retry_same_route') {
      allowed = allowed.filter((candidate) => candidate.id === submission.route_id);
      if (allowed.length === 0) return { failWith: unknownOutcomeError(submission.route_id, 'the route can no longer carry it') };
    }
  }
  return allowed;
}

async function submitOnce(provider: Provider, outbound: OutboundMessage): Promise<SubmitOutcome> {
  try {
    return await provider.submit(outbound);
  } catch (error) {
    // A provider that throws may have written the request first: the outcome is unknown.
    return { status: 'unknown', code: 'provider_timeout', message: `the provider failed: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/**
 * Offers a pending message to its eligible routes in priority order, recording each submission
 * before the network call. Accepted: sent. A hard error: failed at once, no other route tried.
 * Retryable (nothing reached the upstream): the next route. Unknown (the upstream may have it):
 * by afterUnknownOutcome. When no route took it, 'retry' (the caller tries again later), or on
 * the last try (the job's retries are spent or SEND_WINDOW_MS has passed) failed and refunded.
 * No submission starts once SEND_WINDOW_MS has passed.
 */
export async function submitMessage(deps: SubmitDependencies, messageId: string, retriesSpent: boolean, jobAccountId?: string): Promise<'done' | 'retry'> {
  const { db, jobs, batches } = deps;
  const fail = async (error: MessageError, result?: Parameters<typeof recordFailure>[4]) => {
    await retryOnOutage(() => recordFailure(db, jobs, messageId, error, result));
    deps.onFailed?.(messageId, error);
    return 'done' as const;
  };
  // The account its job names is read beside the message: one round trip before the submission
  // instead of two. Not needed when the message turns out to be settled, and not trusted for a
  // message of another account.
  const named = jobAccountId === undefined ? undefined : batches.accounts.submit(jobAccountId);
  named?.catch(() => {});
  const message = await batches.messages.submit(messageId);
  if (!message || message.status !== 'pending') return 'done';
  const { end: windowEnd, expires } = sendWindowOf(message);
  const windowOver = () => Date.now() >= windowEnd;
  const lastTry = retriesSpent || windowOver();
  const notSentInWindow = (why: string) =>
    fail(
      expires
        ? { type: 'provider_error', code: 'expired', message: `The message expired unsent: ${why}` }
        : { type: 'provider_error', code: 'provider_unavailable', message: `The message was not sent: ${why}` },
    );
  const account = await (named && jobAccountId === message.account_id ? named : batches.accounts.submit(message.account_id));
  const scheduledFirstTry = message.send_at !== null && !message.submitted;
  if (!account.active) {
    // A scheduled message goes only from an active account; any other waits, and goes if the
    // account is reactivated within the window.
    if (scheduledFirstTry)
      return fail({ type: 'invalid_request_error', code: 'account_inactive', message: 'Not sent at its send time: the account is not active.' });
    if (!lastTry) return 'retry';
    return notSentInWindow('its account was not active within the send window.');
  }
  // A try that starts after the window submits nothing: the window bounds when a message may go.
  if (windowOver()) return notSentInWindow(`no route took it within ${expires ? 'its validity period' : 'the send window'}.`);
  if (scheduledFirstTry) {
    const refusal = await batches.refusals.submit(message);
    if (refusal) return fail(refusal);
  }
  const eligible = routesFor(account.routes, message.to, message.requested_route_id);
  const routes = message.submitted ? await routesAfterEarlierTries(db, await submissionsOf(db, message.id), eligible) : eligible;
  if (!Array.isArray(routes)) return fail(routes.failWith);
  const outbound = outboundOf(message, expires ? windowEnd : undefined);
  let lastProblem = 'no active route of the account covers this number any more.';
  let charged = message.cost;

  for (const route of routes) {
    // The routes before this one may have taken the rest of the window.
    if (windowOver()) break;
    const price = multiply(route.price_per_segment, message.segments);
    if (compare(price, charged) > 0) {
      if (!(await chargeForRoute(db, jobs, message.id, price))) {
        lastProblem = `the balance does not cover the price of route ${route.id}.`;
        continue;
      }
      charged = price;
    }
    const attemptId = await batches.begun.submit({ messageId: message.id, routeId: route.id });
    // Canceled since it was read: it is no longer pending, and nothing was handed over.
    if (attemptId === undefined) return 'done';
    const started = performance.now();
    const outcome = await submitOnce(deps.providers.get(route), outbound);
    const durationMs = performance.now() - started;
    deps.onSubmit?.(route, message.id, outcome, durationMs);
    // The upstream has answered: from here its answer must be recorded, outage or not.
    const submission = { attemptId, durationMs };
    if (outcome.status === 'accepted') {
      await retryOnOutage(() => batches.acceptances.submit({ messageId: message.id, route, price, accepted: outcome, submission }));
      return 'done';
    }
    const result = { ...submission, outcome: outcome.status, errorCode: outcome.code, errorMessage: outcome.message };
    if (outcome.status === 'rejected') {
      return fail({ type: 'provider_error', code: outcome.code, message: outcome.message }, result);
    }
    const rule = outcome.status === 'unknown' ? afterUnknownOutcome(route) : 'fail_over';
    if (rule === 'fail' || (rule === 'retry_same_route' && lastTry)) {
      return fail(unknownOutcomeError(route.id, outcome.message), result);
    }
    await retryOnOutage(() => settleSubmission(db, attemptId, result, { type: 'provider_error', code: outcome.code, message: outcome.message }));
    if (rule === 'retry_same_route') return 'retry';
    lastProblem = outcome.message;
  }

  if (!lastTry && !windowOver()) return 'retry';
  return fail({ type: 'provider_error', code: 'provider_unavailable', message: `No route could take the message; last: ${lastProblem}` });
}

/**
 * Until when a message may be submitted: SEND_WINDOW_MS, or its validity period when that is
 * shorter (then it `expires`), both counted from its send time, or from its acceptance.
 */
export function sendWindowOf(message: Pick<MessageRow, 'created_at' | 'send_at' | 'validity_period'>): { end: number; expires: boolean } {
  const start = (message.send_at ?? message.created_at).getTime();
  const validity = message.validity_period === null ? Infinity : message.validity_period * 1000;
  return validity < SEND_WINDOW_MS ? { end: start + validity, expires: true } : { end: start + SEND_WINDOW_MS, expires: false };
}

/** What an upstream is handed; with a validity, the seconds left of it (at least 1), so that the carrier stops trying too. */
function outboundOf(message: MessageRow, validUntil: number | undefined): OutboundMessage {
  const { encoding, segments, parts } = planSegments(message.body);
  const validitySeconds = validUntil === undefined ? undefined : Math.max(1, Math.ceil((validUntil - Date.now()) / 1000));
  return { messageId: message.id, to: message.to, from: message.from, body: message.body, encoding, segments, parts, validitySeconds };
}
