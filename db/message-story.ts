import type { Knex } from 'knex';
import type { LedgerEntryRow } from './ledger.ts';
import type { SubmissionOutcome } from './message-attempts.ts';
import type { AttemptRow } from './webhooks.ts';
import type { EventRow } from './events.ts';

/**
 * What a message's story reads: every row about one message, each with `at_us`, its time in
 * microseconds since the epoch. JavaScript dates keep milliseconds only, and the rows of one
 * send (its debit, its status, its event) often share a millisecond: ordering them by the
 * database's full precision keeps the story in the order it happened.
 */
export type Timed<Row> = Row & { at_us: string };

export interface AttemptRecord {
  id: string;
  message_id: string;
  route_id: number;
  outcome: SubmissionOutcome | 'submitting';
  error_code: string | null;
  error_message: string | null;
  duration_ms: number | null;
  created_at: Date;
}

export interface MessageTimes {
  created_us: string;
  sent_us: string | null;
  delivered_us: string | null;
  failed_us: string | null;
}

export interface StoryRows {
  times: MessageTimes;
  attempts: Timed<AttemptRecord>[];
  events: Timed<EventRow>[];
  webhookAttempts: Timed<AttemptRow>[];
  ledger: Timed<LedgerEntryRow>[];
}

const micros = (column: string) => `(extract(epoch FROM ${column}) * 1000000)::bigint::text`;

/** The rows of a message's story; the caller has found the message (of `accountId`). */
export async function readStoryRows(db: Knex, accountId: string, messageId: string): Promise<StoryRows> {
  const timed = (table: string) => db(table).select('*', db.raw(`${micros('created_at')} AS at_us`));
  const [[times], attempts, events, ledger] = (await Promise.all([
    db('messages')
      .where({ id: messageId })
      .select(
        db.raw(`${micros('created_at')} AS created_us`),
        db.raw(`${micros('sent_at')} AS sent_us`),
        db.raw(`${micros('delivered_at')} AS delivered_us`),
        db.raw(`${micros('failed_at')} AS failed_us`),
      ),
    timed('message_attempts').where({ message_id: messageId }).orderBy('id'),
    timed('events').where({ message_id: messageId }).orderBy('id'),
    timed('ledger_entries').where({ message_id: messageId, account_id: accountId }).orderBy('id'),
  ])) as [MessageTimes[], Timed<AttemptRecord>[], Timed<EventRow>[], Timed<LedgerEntryRow>[]];
  const webhookAttempts =
    events.length === 0
      ? []
      : ((await timed('webhook_attempts')
          .whereIn(
            'event_id',
            events.map((event) => event.id),
          )
          .orderBy('id')) as Timed<AttemptRow>[]);
  return { times, attempts, events, webhookAttempts, ledger };
}
