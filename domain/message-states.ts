import type { Knex } from 'knex';
import type { EventType } from '../db/events.ts';
import { markMessagesReported, markMessagesSent, moveMessageStatus, type MessageRow, type MessageStatus } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { recordEvents } from './events.ts';

/**
 * The message state machine: pending -> sent -> delivered | undelivered, and pending -> failed.
 * Final states never move, but for one: a message failed with an unknown outcome that its
 * upstream later reports delivered (moveLateDelivered). Each move is a guarded update, so a lost
 * race changes nothing.
 */
const MOVES: Record<Exclude<MessageStatus, 'pending'>, { from: MessageStatus; event: EventType }> = {
  sent: { from: 'pending', event: 'message.sent' },
  failed: { from: 'pending', event: 'message.failed' },
  delivered: { from: 'sent', event: 'message.delivered' },
  // The spec's message.failed covers every permanent failure, undeliverable included.
  undelivered: { from: 'sent', event: 'message.failed' },
};

export type MessageChanges = Partial<Pick<MessageRow, 'route_id' | 'provider_message_id' | 'cost' | 'error' | 'sent_at' | 'delivered_at' | 'failed_at'>>;

/** Moves a message to `to` with its changes and records the move's event; undefined when the message was not in the state the move starts from. */
export async function moveMessage(
  trx: Knex.Transaction,
  jobs: JobQueue,
  id: string,
  to: Exclude<MessageStatus, 'pending'>,
  changes: MessageChanges,
): Promise<MessageRow | undefined> {
  const { from, event } = MOVES[to];
  const moved = await moveMessageStatus(trx, id, from, to, changes);
  if (moved) await recordEvents(trx, jobs, [{ message: moved, type: event }]);
  return moved;
}

/** A failed message proven delivered by its upstream's report: it moves to delivered, with its event. */
export async function moveLateDelivered(trx: Knex.Transaction, jobs: JobQueue, id: string, changes: MessageChanges): Promise<MessageRow | undefined> {
  const moved = await moveMessageStatus(trx, id, 'failed', 'delivered', changes);
  if (moved) await recordEvents(trx, jobs, [{ message: moved, type: MOVES.delivered.event }]);
  return moved;
}

/** moveMessage to sent for several pending messages, with one statement and one insert of events. */
export async function moveMessagesToSent(trx: Knex.Transaction, jobs: JobQueue, sends: Parameters<typeof markMessagesSent>[1]): Promise<MessageRow[]> {
  const moved = await markMessagesSent(trx, sends);
  await recordEvents(
    trx,
    jobs,
    moved.map((message) => ({ message, type: MOVES.sent.event })),
  );
  return moved;
}

/** moveMessage to the final status a delivery report gives, for several sent messages, with one statement and one insert of events. */
export async function moveMessagesOnReports(trx: Knex.Transaction, jobs: JobQueue, reports: Parameters<typeof markMessagesReported>[1]): Promise<MessageRow[]> {
  const moved = await markMessagesReported(trx, reports);
  await recordEvents(
    trx,
    jobs,
    moved.map((message) => ({ message, type: MOVES[message.status as 'delivered' | 'undelivered'].event })),
  );
  return moved;
}
