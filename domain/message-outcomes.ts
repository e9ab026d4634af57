import type { Knex } from 'knex';
import { sideBySide } from '../db/statements.ts';
import { keepEarlyReports, lockProviderMessagesThen, takeEarlyReports, takeEarlyReportsOf } from '../db/early-reports.ts';
import { applyBalanceChange, refundedFor } from '../db/ledger.ts';
import { settleSubmission, type SubmissionResult } from '../db/message-attempts.ts';
import { anyPartAmong, findPart, insertParts, markPart, type PartRow } from '../db/message-parts.ts';
import {
  findMessageById,
  findTimedOutMessages,
  messagesByIdsLocked,
  setMessageCost,
  messagesByProviderIdsLocked,
  type MessageByUpstreamId,
  type MessageRow,
} from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import type { RouteRow } from '../db/routes.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { moveBalance } from './ledger.ts';
import { moveLateDelivered, moveMessage, moveMessagesOnReports, moveMessagesToSent } from './message-states.ts';
import { compare, fromUnits, negate, toUnits } from './money.ts';

type MessageError = NonNullable<MessageRow['error']>;

/** Gives money back for a message through the ledger (a rise never warns of a low balance); a zero amount changes nothing. */
async function settle(trx: Knex, message: Pick<MessageRow, 'id' | 'account_id'>, amount: string, kind: 'refund', description: string): Promise<boolean> {
  if (compare(amount, '0') === 0) return true;
  return (await applyBalanceChange(trx, { accountId: message.account_id, kind, amount, messageId: message.id, description })) !== null;
}

/**
 * Before a message is offered to a pricier route, charges the difference; answers false, and
 * changes nothing, when the balance does not cover it (the route is then skipped).
 */
export async function chargeForRoute(db: Knex, jobs: JobQueue, messageId: string, price: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    const difference = fromUnits(toUnits(price) - toUnits(message.cost));
    if (compare(difference, '0') <= 0) return true;
    const debit = { kind: 'debit' as const, amount: negate(difference), messageId: message.id, description: `Failover to a pricier route for ${message.to}` };
    if ((await moveBalance(trx, jobs, message.account_id, [debit])) === null) return false;
    await setMessageCost(trx, messageId, price);
    return true;
  });
}

function reportChange(report: DeliveryReport) {
  const at = report.at ? new Date(report.at) : new Date();
  if (report.status === 'delivered') return { to: 'delivered' as const, changes: { delivered_at: at } };
  const reason = report.errorMessage ?? (report.errorCode ? `The carrier reported ${report.errorCode}.` : 'The carrier could not deliver the message.');
  const code = report.expired ? 'expired' : 'undelivered';
  return { to: 'undelivered' as const, changes: { failed_at: at, error: { type: 'provider_error' as const, code, message: reason } } };
}

/** Answers the message when the report moved it. */
async function applyReport(trx: Knex.Transaction, jobs: JobQueue, message: MessageRow, report: DeliveryReport): Promise<MessageRow | undefined> {
  const { to, changes } = reportChange(report);
  // A report for a message already final (a repeat, or a late one) changes nothing.
  return moveMessage(trx, jobs, message.id, to, changes);
}

/**
 * A report on one part of a concatenated message: the message is undelivered as soon as one part
 * is, and delivered once every part is.
 */
async function applyPartReport(
  trx: Knex.Transaction,
  jobs: JobQueue,
  message: MessageRow,
  part: PartRow,
  report: DeliveryReport,
): Promise<MessageRow | undefined> {
  const statuses = await markPart(trx, part, report.status);
  if (report.status === 'undelivered' || statuses.every((status) => status === 'delivered')) return applyReport(trx, jobs, message, report);
  return undefined;
}

/** A submission the upstream answered, settled once: with the provider's answer and how long it took. */
export interface Submission {
  attemptId: number;
  durationMs: number;
}

/** One upstream's acceptance of one message. */
export interface Acceptance {
  messageId: string;
  route: RouteRow;
  price: string;
  accepted: { providerMessageId: string; partIds?: string[] };
  submission: Submission;
}

/** The upstream ids an acceptance names: each part's, for a message sent in several. */
const partIdsOf = ({ accepted }: Acceptance): string[] => (accepted.partIds && accepted.partIds.length > 1 ? accepted.partIds : []);
const upstreamIdsOf = (acceptance: Acceptance) =>
  (partIdsOf(acceptance).length > 0 ? partIdsOf(acceptance) : [acceptance.accepted.providerMessageId]).map((providerMessageId) => ({
    routeId: acceptance.route.id,
    providerMessageId,
  }));

/**
 * Upstreams took these messages: each becomes sent on its route, its cost settles to that
 * route's price, and delivery reports that arrived before the answer are applied now. One
 * transaction for all of them, with one statement of each kind for the usual acceptance (one
 * upstream id at the price charged); a message carried by a cheaper route (part of its charge
 * refunded) or sent in parts is recorded on its own within the same transaction. A message
 * settled meanwhile (by a later try that took a submission for dead) keeps that settlement.
 */
export async function recordAcceptances(db: Knex, jobs: JobQueue, acceptances: Acceptance[]): Promise<void[]> {
  await db.transaction(async (trx) => {
    const found = await lockProviderMessagesThen<MessageRow>(
      trx,
      acceptances.flatMap(upstreamIdsOf),
      messagesByIdsLocked(acceptances.map(({ messageId }) => messageId)),
    );
    const messages = new Map(found.map((message) => [message.id, message]));
    const pending = acceptances.filter(({ messageId }) => messages.get(messageId)?.status === 'pending');
    const usual = pending.filter(
      (acceptance) => partIdsOf(acceptance).length === 0 && compare(messages.get(acceptance.messageId)!.cost, acceptance.price) === 0,
    );
    const settledMeanwhile = acceptances.filter((acceptance) => !pending.includes(acceptance));
    // Side by side (one round trip on a pipelining connection): each pending message is locked, so
    // all of them move to sent with their submissions, and the upstream ids are locked, so their
    // early reports are theirs to take.
    const [sent, early] = await sideBySide([
      moveMessagesToSent(
        trx,
        jobs,
        usual.map(({ messageId, route, accepted, submission }) => ({
          id: messageId,
          route_id: route.id,
          provider_message_id: accepted.providerMessageId,
          attempt_id: submission.attemptId,
          duration_ms: submission.durationMs,
        })),
      ),
      takeEarlyReportsOf(
        trx,
        usual.map(({ route, accepted }) => ({ routeId: route.id, providerMessageId: accepted.providerMessageId })),
      ),
      ...settledMeanwhile.map(({ submission }) => settleSubmission(trx, submission.attemptId, { outcome: 'accepted', durationMs: submission.durationMs })),
    ]);
    for (const message of sent) {
      for (const report of early.get(`${message.route_id}:${message.provider_message_id}`) ?? [])
        await applyReport(trx, jobs, message, report as unknown as DeliveryReport);
    }
    for (const acceptance of pending.filter((candidate) => !usual.includes(candidate)))
      await recordParticularAcceptance(trx, jobs, messages.get(acceptance.messageId)!, acceptance);
  });
  return acceptances.map(() => undefined);
}

/** An acceptance that refunds part of the charge, or of a message sent in parts, whose reports are kept by part. */
async function recordParticularAcceptance(trx: Knex.Transaction, jobs: JobQueue, message: MessageRow, acceptance: Acceptance): Promise<void> {
  const { messageId, route, price, accepted, submission } = acceptance;
  await settleSubmission(trx, submission.attemptId, { outcome: 'accepted', durationMs: submission.durationMs });
  const excess = fromUnits(toUnits(message.cost) - toUnits(price));
  if (compare(excess, '0') > 0) await settle(trx, message, excess, 'refund', `Carried by a cheaper route to ${message.to}`);
  const sent = await moveMessage(trx, jobs, messageId, 'sent', {
    error: null,
    route_id: route.id,
    provider_message_id: accepted.providerMessageId,
    sent_at: new Date(),
    cost: compare(excess, '0') > 0 ? price : message.cost,
  });
  if (!sent) return;
  const partIds = partIdsOf(acceptance);
  if (partIds.length === 0) {
    for (const report of await takeEarlyReports(trx, route.id, accepted.providerMessageId))
      await applyReport(trx, jobs, sent, report as unknown as DeliveryReport);
    return;
  }
  await insertParts(trx, messageId, route.id, partIds);
  for (const id of partIds) {
    const part = (await findPart(trx, route.id, id)) as PartRow;
    for (const report of await takeEarlyReports(trx, route.id, id)) {
      await applyPartReport(trx, jobs, (await findMessageById(trx, messageId)) as MessageRow, part, report as unknown as DeliveryReport);
    }
  }
}

/**
 * The message failed without any upstream having taken it for certain: it becomes failed and
 * its charge is refunded. The submission that ended it, if one did, is settled with it.
 */
export async function recordFailure(
  db: Knex,
  jobs: JobQueue,
  messageId: string,
  error: MessageError,
  submission?: Submission & SubmissionResult,
): Promise<void> {
  await db.transaction(async (trx) => {
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    if (submission) await settleSubmission(trx, submission.attemptId, submission);
    if (message.status !== 'pending') return;
    await failPending(trx, jobs, message, error);
  });
}

/** A pending message, locked by the caller, becomes failed with `error` and its charge is refunded, with message.failed. */
export async function failPending(trx: Knex.Transaction, jobs: JobQueue, message: MessageRow, error: MessageError, now = new Date()): Promise<MessageRow> {
  await settle(trx, message, message.cost, 'refund', `Refund of the failed message to ${message.to}`);
  return (await moveMessage(trx, jobs, message.id, 'failed', { failed_at: now, error, cost: '0.0000' })) as MessageRow;
}

/**
 * How a report was stored: applied to its message, or kept until the submit response arrives.
 * When it delivered its message, the seconds from sent to delivered, for the operator's metrics:
 * a repeat, or a report on a part that leaves others pending, has none.
 */
export interface RecordedReport {
  stored: 'applied' | 'kept';
  sentToDeliveredSeconds?: number;
}

function applied(moved: MessageRow | undefined): RecordedReport {
  if (moved?.status !== 'delivered' || !moved.sent_at || !moved.delivered_at) return { stored: 'applied' };
  return { stored: 'applied', sentToDeliveredSeconds: Math.max(0, (moved.delivered_at.getTime() - moved.sent_at.getTime()) / 1000) };
}

/** A delivery report and the route it came from. */
export interface RouteReport {
  routeId: number;
  report: DeliveryReport;
}

const upstreamKey = ({ routeId, providerMessageId }: { routeId: number; providerMessageId: string }) => `${routeId}:${providerMessageId}`;

/**
 * Delivery reports from upstreams, in one transaction: each applied once however often it
 * repeats, and kept until the submit response is recorded when it arrives first. Rejects when
 * they could not be stored, so that the caller leaves them to their senders to repeat. Reports
 * on one upstream message are taken in arrival order, one round each.
 */
export async function recordDeliveryReports(db: Knex, jobs: JobQueue, reports: RouteReport[]): Promise<RecordedReport[]> {
  const recorded = new Array<RecordedReport>(reports.length);
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  reports.forEach(({ routeId, report }, index) => {
    const key = upstreamKey({ routeId, providerMessageId: report.providerMessageId });
    const round = seen.get(key) ?? 0;
    seen.set(key, round + 1);
    (rounds[round] ??= []).push(index);
  });
  await db.transaction(async (trx) => {
    for (const round of rounds) {
      const answers = await recordRound(
        trx,
        jobs,
        round.map((index) => reports[index]),
      );
      round.forEach((index, position) => (recorded[index] = answers[position]));
    }
  });
  return recorded;
}

/**
 * Reports on distinct upstream messages, with one statement of each kind: the upstream ids
 * locked, their messages found and locked, the reports that came first kept, and the others'
 * messages moved with their events. A report on one part of a concatenated message is applied
 * on its own, as the message's state depends on its other parts.
 */
async function recordRound(trx: Knex.Transaction, jobs: JobQueue, reports: RouteReport[]): Promise<RecordedReport[]> {
  const upstreamIds = reports.map(({ routeId, report }) => ({ routeId, providerMessageId: report.providerMessageId }));
  const byUpstreamId = await lockProviderMessagesThen<MessageByUpstreamId>(trx, upstreamIds, messagesByProviderIdsLocked(upstreamIds));
  const wholes = new Map(
    byUpstreamId
      .filter((row) => !row.upstream_id_is_part)
      .map(({ upstream_id_is_part: _, ...message }) => [
        upstreamKey({ routeId: message.route_id as number, providerMessageId: message.provider_message_id as string }),
        message,
      ]),
  );
  // A part other than the first is found by no message: only then are the parts read on their own.
  const unmatched = upstreamIds.filter((id) => !wholes.has(upstreamKey(id)));
  const parts = new Map<string, PartRow>();
  if (unmatched.length > 0 && (await anyPartAmong(trx, unmatched))) {
    for (const id of unmatched) {
      const part = await findPart(trx, id.routeId, id.providerMessageId);
      if (part) parts.set(upstreamKey(id), part);
    }
  }
  const found = upstreamIds.map((id) => wholes.get(upstreamKey(id)));
  // A report that proves delivered a message whose submit answer never came (it failed with
  // provider_timeout) names it by Dispatch's id: echoed as message_id, or as the provider's own id.
  const candidates = reports.flatMap(({ routeId, report }, index) =>
    found[index] || parts.has(upstreamKey(upstreamIds[index])) || report.status !== 'delivered'
      ? []
      : [{ index, routeId, messageId: report.messageId ?? report.providerMessageId }],
  );
  const timedOut = await findTimedOutMessages(trx, candidates);
  const late = new Map<number, MessageRow>();
  for (const { index, routeId, messageId } of candidates) {
    const message = timedOut.find((row) => row.id === messageId && row.reported_by === routeId);
    // Two reports naming one message move and charge it once.
    if (message && ![...late.values()].includes(message)) late.set(index, message);
  }
  const keep = (index: number) => !found[index] && !parts.has(upstreamKey(upstreamIds[index])) && !late.has(index);
  // Side by side: reports kept for later and messages moved concern different upstream ids. A
  // report for a message already final (a repeat, or a late one) changes nothing.
  const [, moved] = await sideBySide([
    keepEarlyReports(
      trx,
      reports.flatMap(({ routeId, report }, index) => (keep(index) ? [{ routeId, providerMessageId: report.providerMessageId, report }] : [])),
    ),
    moveMessagesOnReports(
      trx,
      jobs,
      reports.flatMap(({ report }, index) => {
        const message = found[index];
        if (!message) return [];
        const { to, changes } = reportChange(report);
        return [{ id: message.id, status: to, ...changes }];
      }),
    ),
  ]);
  const movedById = new Map(moved.map((message) => [message.id, message]));
  const recorded: RecordedReport[] = [];
  for (const [index, { routeId, report }] of reports.entries()) {
    const part = parts.get(upstreamKey(upstreamIds[index]));
    const lateMessage = late.get(index);
    if (part) recorded.push(applied(await applyPartReport(trx, jobs, (await findMessageById(trx, part.message_id, true)) as MessageRow, part, report)));
    else if (lateMessage) recorded.push(applied(await recordLateDelivery(trx, jobs, lateMessage, routeId, report)));
    else recorded.push(found[index] ? applied(movedById.get(found[index].id)) : { stored: 'kept' });
  }
  return recorded;
}

/**
 * The upstream delivered a message that failed when its answer was lost: the customer got the
 * SMS, and the operator pays the upstream for it. It moves to delivered and is charged again what
 * was refunded, with a ledger row that says why (when the balance no longer covers it, it is
 * delivered uncharged). Its message.delivered event follows.
 */
async function recordLateDelivery(
  trx: Knex.Transaction,
  jobs: JobQueue,
  message: MessageRow,
  routeId: number,
  report: DeliveryReport,
): Promise<MessageRow | undefined> {
  const refunded = await refundedFor(trx, message.id);
  const debit = {
    kind: 'debit' as const,
    amount: negate(refunded),
    messageId: message.id,
    description: `Charged again: the upstream delivered the message to ${message.to} after its answer was lost`,
  };
  const charged = compare(refunded, '0') > 0 && (await moveBalance(trx, jobs, message.account_id, [debit])) !== null;
  const { changes } = reportChange(report);
  return moveLateDelivered(trx, jobs, message.id, {
    ...changes,
    error: null,
    route_id: routeId,
    provider_message_id: report.providerMessageId,
    cost: charged ? refunded : message.cost,
  });
}
