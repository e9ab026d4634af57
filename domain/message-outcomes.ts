import type { Knex } from 'knex';
import { keepEarlyReport, lockProviderMessage, takeEarlyReports } from '../db/early-reports.ts';
import { applyBalanceChange } from '../db/ledger.ts';
import { recordAttempt, type AttemptRecord } from '../db/message-attempts.ts';
import { findMessageById, findMessageByProviderId, type MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import type { RouteRow } from '../db/routes.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { moveMessage } from './message-states.ts';
import { compare, fromUnits, negate, toUnits } from './money.ts';

type MessageError = NonNullable<MessageRow['error']>;

/** Moves money for a message through the ledger; a zero amount changes nothing. */
async function settle(trx: Knex, message: Pick<MessageRow, 'id' | 'account_id'>, amount: string, kind: 'debit' | 'refund', description: string): Promise<boolean> {
  if (compare(amount, '0') === 0) return true;
  return (await applyBalanceChange(trx, { accountId: message.account_id, kind, amount, messageId: message.id, description })) !== null;
}

/**
 * Before a message is offered to a pricier route, charges the difference; answers false, and
 * changes nothing, when the balance does not cover it (the route is then skipped).
 */
export async function chargeForRoute(db: Knex, messageId: string, price: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    const difference = fromUnits(toUnits(price) - toUnits(message.cost));
    if (compare(difference, '0') <= 0) return true;
    if (!(await settle(trx, message, negate(difference), 'debit', `Failover to a pricier route for ${message.to}`))) return false;
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

async function applyReport(trx: Knex.Transaction, jobs: JobQueue, message: MessageRow, report: DeliveryReport): Promise<void> {
  const { to, changes } = reportChange(report);
  // A report for a message already final (a repeat, or a late one) changes nothing.
  await moveMessage(trx, jobs, message.id, to, changes);
}

/**
 * The upstream took the message: it becomes sent on this route, its cost settles to this
 * route's price, and delivery reports that arrived before this answer are applied now.
 */
export async function recordAcceptance(db: Knex, jobs: JobQueue, messageId: string, route: RouteRow, price: string, providerMessageId: string, attempt: Omit<AttemptRecord, 'outcome'>): Promise<void> {
  await db.transaction(async (trx) => {
    await lockProviderMessage(trx, route.id, providerMessageId);
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    await recordAttempt(trx, { ...attempt, outcome: 'accepted' });
    const excess = fromUnits(toUnits(message.cost) - toUnits(price));
    if (compare(excess, '0') > 0) await settle(trx, message, excess, 'refund', `Carried by a cheaper route to ${message.to}`);
    const sent = await moveMessage(trx, jobs, messageId, 'sent', { route_id: route.id, provider_message_id: providerMessageId, sent_at: new Date(), cost: compare(excess, '0') > 0 ? price : message.cost });
    if (!sent) return;
    for (const report of await takeEarlyReports(trx, route.id, providerMessageId)) await applyReport(trx, jobs, sent, report as unknown as DeliveryReport);
  });
}

/** The message failed before any upstream took it: it becomes failed and its charge is refunded. */
export async function recordFailure(db: Knex, jobs: JobQueue, messageId: string, error: MessageError, attempt?: Omit<AttemptRecord, 'outcome'> & { outcome: 'rejected' | 'retryable' }): Promise<void> {
  await db.transaction(async (trx) => {
    const message = (await findMessageById(trx, messageId, true)) as MessageRow;
    if (attempt) await recordAttempt(trx, attempt);
    if (message.status !== 'pending') return;
    await settle(trx, message, message.cost, 'refund', `Refund of the failed message to ${message.to}`);
    await moveMessage(trx, jobs, messageId, 'failed', { failed_at: new Date(), error, cost: '0.0000' });
  });
}

/**
 * A delivery report from an upstream: applied once however often it repeats, and kept until the
 * submit response is recorded when it arrives first.
 */
export async function recordDeliveryReport(db: Knex, jobs: JobQueue, routeId: number, report: DeliveryReport): Promise<'applied' | 'kept'> {
  return db.transaction(async (trx) => {
    await lockProviderMessage(trx, routeId, report.providerMessageId);
    const message = await findMessageByProviderId(trx, routeId, report.providerMessageId);
    if (!message) {
      await keepEarlyReport(trx, routeId, report.providerMessageId, report);
      return 'kept';
    }
    await applyReport(trx, jobs, message, report);
    return 'applied';
  });
}
