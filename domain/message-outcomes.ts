import type { Knex } from 'knex';
import { sideBySide } from '../db/batching.ts';
import { keepEarlyReport, keepEarlyReports, lockProviderMessage, lockProviderMessagesThen, takeEarlyReports, takeEarlyReportsOf } from '../db/early-reports.ts';
import { applyBalanceChange } from '../db/ledger.ts';
import { settleSubmission, type SubmissionResult } from '../db/message-attempts.ts';
import { anyPartAmong, findPart, insertParts, markPart, type PartRow } from '../db/message-parts.ts';
import { findMessageById, findMessageByProviderId, messagesByIdsLocked, messagesByProviderIdsLocked, type MessageByUpstreamId, type MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import type { RouteRow } from '../db/routes.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { moveBalance } from './ledger.ts';
import { moveMessage, moveMessagesOnReports, moveMessagesToSent } from './message-states.ts';
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
    await trx('messages').where({ id: messageId }).update({ cost: price });
    return true;
  });
}

function reportChange(report: DeliveryReport) {
  const at = report.at ? new Date(report.at) : new Date();
  if (report.status === 'delivered') return { to: 'delivered' as const, changes: { delivered_at: at } };
  const reason = report.errorMessage ?? (report.errorCode ? `The carrier reported ${report.errorCode}.` : 'The carrier could not deliver the message.');
  return { to: 'undelivered' as const, changes: { failed_at: at, error: { type: 'provider_error' as const, code: 'undelivered', message: reason } } };
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
async function applyPartReport(trx: Knex.Transaction, jobs: JobQueue, message: MessageRow, part: PartRow, report: DeliveryReport): Promise<MessageRow | undefined> {
  const statuses = await markPart(trx, part, report.status);
  if (report.status === 'undelivered' || statuses.every((status) => status === 'delivered')) return applyReport(trx, jobs, message, report);
  return undefined;
}

/** A submission the upstream answered, settled once: with the provider's answer and how long it took. */
export interface Submission {
  attemptId: number;
  durationMs: number;
}

/**
 * The upstream took the message: it becomes sent on this route, its cost settles to this
 * route's price, and delivery reports that arrived before this answer are applied now.
 */
export async function recordAcceptance(db: Knex, jobs: JobQueue, messageId: string, route: RouteRow, price: string, accepted: { providerMessageId: string; partIds?: string[] }, submission: Submission): Promise<void> {
  const partIds = accepted.partIds && accepted.partIds.length > 1 ? accepted.partIds : [];
  await db.transaction(async (trx) => {
    for (const id of partIds.length > 0 ? partIds : [accepted.providerMessageId]) await lockProviderMessage(trx, route.id, id);
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    await settleSubmission(trx, submission.attemptId, { outcome: 'accepted', durationMs: submission.durationMs });
    // Settled meanwhile by a later try that took this one for dead: its settlement stands.
    if (message.status !== 'pending') return;
    const excess = fromUnits(toUnits(message.cost) - toUnits(price));
    if (compare(excess, '0') > 0) await settle(trx, message, excess, 'refund', `Carried by a cheaper route to ${message.to}`);
    const sent = await moveMessage(trx, jobs, messageId, 'sent', { error: null, route_id: route.id, provider_message_id: accepted.providerMessageId, sent_at: new Date(), cost: compare(excess, '0') > 0 ? price : message.cost });
    if (!sent) return;
    if (partIds.length === 0) {
      for (const report of await takeEarlyReports(trx, route.id, accepted.providerMessageId)) await applyReport(trx, jobs, sent, report as unknown as DeliveryReport);
      return;
    }
    await insertParts(trx, messageId, route.id, partIds);
    for (const id of partIds) {
      const part = (await findPart(trx, route.id, id)) as PartRow;
      for (const report of await takeEarlyReports(trx, route.id, id)) {
        await applyPartReport(trx, jobs, (await findMessageById(trx, messageId)) as MessageRow, part, report as unknown as DeliveryReport);
      }
    }
  });
}

/** One upstream's acceptance of one message, as recordAcceptance takes it. */
export interface Acceptance {
  messageId: string;
  route: RouteRow;
  price: string;
  accepted: { providerMessageId: string; partIds?: string[] };
  submission: Submission;
}

/** A batch that recordAcceptances leaves to recordAcceptance, one by one: a rare case it does not do in sets. */
class OneByOne extends Error {}

/**
 * recordAcceptance for several messages in one transaction, with one statement of each kind:
 * the upstream ids locked, the messages locked, the submissions settled, the messages moved to
 * sent with their events, and the early reports taken. Concatenated messages and a settlement
 * that refunds part of the charge throw OneByOne, before anything is written, so that the
 * caller records each with recordAcceptance.
 */
export async function recordAcceptances(db: Knex, jobs: JobQueue, acceptances: Acceptance[]): Promise<void[]> {
  if (acceptances.some(({ accepted }) => (accepted.partIds?.length ?? 0) > 1)) throw new OneByOne('a concatenated message');
  const upstreamIds = acceptances.map(({ route, accepted }) => ({ routeId: route.id, providerMessageId: accepted.providerMessageId }));
  await db.transaction(async (trx) => {
    const found = await lockProviderMessagesThen<MessageRow>(trx, upstreamIds, messagesByIdsLocked(acceptances.map(({ messageId }) => messageId)));
    const messages = new Map(found.map((message) => [message.id, message]));
    // Settled meanwhile by a later try that took a submission for dead: its settlement stands.
    const pending = acceptances.filter(({ messageId }) => messages.get(messageId)?.status === 'pending');
    if (pending.some(({ messageId, price }) => compare((messages.get(messageId) as MessageRow).cost, price) !== 0)) throw new OneByOne('a cheaper route than charged');
    const settledMeanwhile = acceptances.filter((acceptance) => !pending.includes(acceptance));
    // Side by side (one round trip on a pipelining connection): each pending message is locked, so
    // all of them move to sent with their submissions, and the upstream ids are locked, so their
    // early reports are theirs to take.
    const [sent, early] = await sideBySide([
      moveMessagesToSent(trx, jobs, pending.map(({ messageId, route, accepted, submission }) => ({ id: messageId, route_id: route.id, provider_message_id: accepted.providerMessageId, attempt_id: submission.attemptId, duration_ms: submission.durationMs }))),
      takeEarlyReportsOf(trx, pending.map(({ route, accepted }) => ({ routeId: route.id, providerMessageId: accepted.providerMessageId }))),
      ...settledMeanwhile.map(({ submission }) => settleSubmission(trx, submission.attemptId, { outcome: 'accepted', durationMs: submission.durationMs })),
    ]);
    for (const message of sent) {
      for (const report of early.get(`${message.route_id}:${message.provider_message_id}`) ?? []) await applyReport(trx, jobs, message, report as unknown as DeliveryReport);
    }
  });
  return acceptances.map(() => undefined);
}

/**
 * The message failed without any upstream having taken it for certain: it becomes failed and
 * its charge is refunded. The submission that ended it, if one did, is settled with it.
 */
export async function recordFailure(db: Knex, jobs: JobQueue, messageId: string, error: MessageError, submission?: Submission & SubmissionResult): Promise<void> {
  await db.transaction(async (trx) => {
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    if (submission) await settleSubmission(trx, submission.attemptId, submission);
    if (message.status !== 'pending') return;
    await settle(trx, message, message.cost, 'refund', `Refund of the failed message to ${message.to}`);
    await moveMessage(trx, jobs, messageId, 'failed', { failed_at: new Date(), error, cost: '0.0000' });
  });
}

/**
 * A delivery report from an upstream: applied once however often it repeats, and kept until the
 * submit response is recorded when it arrives first. Rejects when it could not be stored, so
 * that the caller leaves the report to its sender to repeat.
 */
export async function recordDeliveryReport(db: Knex, jobs: JobQueue, routeId: number, report: DeliveryReport): Promise<RecordedReport> {
  return db.transaction(async (trx) => {
    await lockProviderMessage(trx, routeId, report.providerMessageId);
    const part = await findPart(trx, routeId, report.providerMessageId);
    if (part) return applied(await applyPartReport(trx, jobs, (await findMessageById(trx, part.message_id, true)) as MessageRow, part, report));
    const message = await findMessageByProviderId(trx, routeId, report.providerMessageId);
    if (!message) {
      await keepEarlyReport(trx, routeId, report.providerMessageId, report);
      return { stored: 'kept' };
    }
    return applied(await applyReport(trx, jobs, message, report));
  });
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
 * recordDeliveryReport for several reports in one transaction, with one statement of each kind:
 * the upstream ids locked, their messages found and locked, the reports that came first kept,
 * and the others' messages moved with their events. Reports on parts of concatenated messages,
 * and two reports on one upstream message, throw OneByOne before anything is written, so that
 * the caller records each with recordDeliveryReport.
 */
export async function recordDeliveryReports(db: Knex, jobs: JobQueue, reports: RouteReport[]): Promise<RecordedReport[]> {
  const upstreamIds = reports.map(({ routeId, report }) => ({ routeId, providerMessageId: report.providerMessageId }));
  if (new Set(upstreamIds.map(upstreamKey)).size < reports.length) throw new OneByOne('two reports on one upstream message');
  return db.transaction(async (trx) => {
    const byUpstreamId = await lockProviderMessagesThen<MessageByUpstreamId>(trx, upstreamIds, messagesByProviderIdsLocked(upstreamIds));
    if (byUpstreamId.some((row) => row.upstream_id_is_part)) throw new OneByOne('a report on a part of a message');
    const messages = new Map(byUpstreamId.map(({ upstream_id_is_part: _, ...message }) => [upstreamKey({ routeId: message.route_id as number, providerMessageId: message.provider_message_id as string }), message]));
    // A part other than the first is found by no message: only then are the parts read on their own.
    const unmatched = upstreamIds.filter((id) => !messages.has(upstreamKey(id)));
    if (unmatched.length > 0 && (await anyPartAmong(trx, unmatched))) throw new OneByOne('a report on a part of a message');
    const found = reports.map((_, index) => messages.get(upstreamKey(upstreamIds[index])));
    // Side by side: reports kept for later and messages moved concern different upstream ids. A
    // report for a message already final (a repeat, or a late one) changes nothing.
    const [, moved] = await sideBySide([
      keepEarlyReports(trx, reports.flatMap(({ routeId, report }, index) => (found[index] ? [] : [{ routeId, providerMessageId: report.providerMessageId, report }]))),
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
    return found.map((message): RecordedReport => (message ? applied(movedById.get(message.id)) : { stored: 'kept' }));
  });
}
