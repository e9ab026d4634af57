import type { Knex } from 'knex';
import type { MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { Batcher } from '../db/batching.ts';
import { acceptMessage, acceptMessages, type SingleSend } from './sending.ts';

/**
 * Group commit of single sends: the sends that arrive while a group commits share the next
 * group's transaction, its statements and the balance row's lock (db/batching.ts).
 *
 * Each send keeps its own outcome: acceptMessages refuses one alone for what concerns it alone;
 * when the group as a whole cannot be accepted (a key's limit or the balance reached part way,
 * or any failure), it is rolled back and each send is accepted or refused alone, in arrival order,
 * as if it had come alone.
 */
export class SendGroupCommit {
  readonly #batcher: Batcher<SingleSend, MessageRow>;

  constructor(db: Knex, jobs: JobQueue) {
    this.#batcher = new Batcher<SingleSend, MessageRow>({
      run: (sends) => db.transaction((trx) => acceptMessages(trx, jobs, sends)),
      runOne: (send) => db.transaction((trx) => acceptMessage(trx, jobs, send.sender, send.request)),
      // Enough to amortise a commit, few enough that one group's statements stay small.
      maxBatch: 64,
      // One group at a time: on full cores the sends that arrive while a group commits make the
      // next one larger, which costs less CPU a send than two groups overlapping (BENCHMARKS.md,
      // "One batch under way").
      maxInFlight: 1,
    });
  }

  accept(sender: SingleSend['sender'], request: SingleSend['request']): Promise<MessageRow> {
    return this.#batcher.submit({ sender, request });
  }
}
