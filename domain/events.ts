import type { Knex } from 'knex';
import { insertEventsFindingEndpoints, type EventRow, type EventType } from '../db/events.ts';
import type { MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { newId } from './ids.ts';
import { messageView } from './message-view.ts';
import { fanOut } from './webhooks.ts';

/**
 * The one way events come to exist: called inside the transaction that changes the messages'
 * status, so an event is recorded exactly when its change commits. Webhook delivery builds on it.
 */
export async function recordEvents(trx: Knex.Transaction, jobs: JobQueue, changes: { message: MessageRow; type: EventType }[]): Promise<EventRow[]> {
  const { events, endpoints } = await insertEventsFindingEndpoints(
    trx,
    changes.map(({ message, type }) => ({ id: newId('evt'), account_id: message.account_id, type, message_id: message.id, data: { ...messageView(message) } })),
  );
  await fanOut(trx, jobs, events, endpoints);
  return events;
}

/** Events about something other than an outbound message (an opt-out, an opt-in): recorded and fanned out the same way. */
export async function recordSubjectEvents(
  trx: Knex.Transaction,
  jobs: JobQueue,
  events: { accountId: string; type: EventType; data: Record<string, unknown> }[],
): Promise<EventRow[]> {
  const { events: stored, endpoints } = await insertEventsFindingEndpoints(
    trx,
    events.map(({ accountId, type, data }) => ({ id: newId('evt'), account_id: accountId, type, message_id: null, data })),
  );
  await fanOut(trx, jobs, stored, endpoints);
  return stored;
}
