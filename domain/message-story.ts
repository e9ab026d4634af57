import type { Knex } from 'knex';
import type { EventRow } from '../db/events.ts';
import type { LedgerEntryRow } from '../db/ledger.ts';
import { readStoryRows, type AttemptRecord } from '../db/message-story.ts';
import { findMessageById, type MessageRow, type MessageStatus } from '../db/messages.ts';
import type { AttemptRow } from '../db/webhooks.ts';
import { notFound } from './errors.ts';

/** One thing that happened to a message. */
export type StoryFact =
  | { kind: 'status'; status: MessageStatus }
  | { kind: 'attempt'; number: number; attempt: AttemptRecord }
  | { kind: 'event'; event: EventRow }
  | { kind: 'webhook_delivery'; webhookAttempt: AttemptRow }
  | { kind: 'ledger'; entry: LedgerEntryRow };

export type StoryEntry = StoryFact & { at: Date };

export interface MessageStory {
  message: MessageRow;
  entries: StoryEntry[];
}

// Rows written by one statement can share a timestamp: then they read in the order a send writes them.
const KIND_ORDER: Record<StoryFact['kind'], number> = { status: 0, ledger: 1, attempt: 2, event: 3, webhook_delivery: 4 };

/**
 * Everything that happened to one message, oldest first: the statuses it went through, its
 * submissions, its events and every attempt to deliver them to a webhook endpoint, and the
 * balance changes it caused. `accountId` scopes it to the calling account, whose view of another
 * account's message is a missing one; the operator gives none.
 */
export async function messageStory(db: Knex, id: string, accountId?: string): Promise<MessageStory> {
  const message = await findMessageById(db, id);
  if (!message || (accountId !== undefined && message.account_id !== accountId)) throw notFound('message', id);
  const rows = await readStoryRows(db, message.account_id, id);
  const timed: { us: bigint; fact: StoryFact }[] = [];
  const add = (us: string | null, fact: StoryFact) => {
    if (us !== null) timed.push({ us: BigInt(us), fact });
  };

  // A bulk item refused when it was accepted (no balance, blocklisted...) was stored failed: it was never pending.
  const refusedAtOnce = message.status === 'failed' && message.error !== null && message.error.type !== 'provider_error';
  if (!refusedAtOnce) add(rows.times.created_us, { kind: 'status', status: 'pending' });
  // Each later change recorded its event in its own transaction: the event's time places it among
  // the rows that transaction wrote. The message's timestamp (the upstream's, for a delivery) is
  // the fallback once the event is past retention.
  const finalStatus = message.status === 'undelivered' ? 'undelivered' : 'failed';
  const changes: [MessageStatus, EventRow['type'], string | null][] = [
    ['sent', 'message.sent', rows.times.sent_us],
    ['delivered', 'message.delivered', rows.times.delivered_us],
    [finalStatus, 'message.failed', rows.times.failed_us],
  ];
  for (const [status, type, stamped] of changes) {
    const recorded = rows.events.find((event) => event.type === type);
    add(recorded ? recorded.at_us : stamped, { kind: 'status', status });
  }
  rows.attempts.forEach((attempt, index) => add(attempt.at_us, { kind: 'attempt', number: index + 1, attempt }));
  for (const event of rows.events) add(event.at_us, { kind: 'event', event });
  for (const webhookAttempt of rows.webhookAttempts) add(webhookAttempt.at_us, { kind: 'webhook_delivery', webhookAttempt });
  for (const entry of rows.ledger) add(entry.at_us, { kind: 'ledger', entry });

  timed.sort((a, b) => (a.us === b.us ? KIND_ORDER[a.fact.kind] - KIND_ORDER[b.fact.kind] : a.us < b.us ? -1 : 1));
  return { message, entries: timed.map(({ us, fact }) => ({ ...fact, at: new Date(Number(us / 1000n)) })) };
}
