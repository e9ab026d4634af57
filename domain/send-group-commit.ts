import type { Knex } from 'knex';
import type { MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { Batcher } from '../lib/batcher.ts';
import type { Clock } from '../lib/clock.ts';
import type { SendItem } from './send-checks.ts';
import { acceptBatch, acceptMessage, BatchRefused } from './sending.ts';

/**
 * Group commit of single sends: the sends that arrive while a group commits share the next
 * group's transaction, its statements and the balance row's lock (lib/batcher.ts).
 *
 * Each send keeps its own outcome: acceptBatch refuses one alone for what concerns it alone.
 * When some accounts' sends cannot be accepted together (a key's limit or the balance reached
 * part way), the other accounts' sends still go together, and those accounts' sends are accepted
 * or refused one by one, in arrival order, as if each had come alone: an account out of balance
 * does not split its neighbours' group. Any other failure rolls the group back and the batcher
 * takes every send alone.
 */
export class SendGroupCommit {
  readonly #batcher: Batcher<SendItem, MessageRow>;
  readonly #db: Knex;
  readonly #jobs: JobQueue;
  readonly #clock: Clock;

  constructor(db: Knex, jobs: JobQueue, clock: Clock) {
    this.#db = db;
    this.#jobs = jobs;
    this.#clock = clock;
    this.#batcher = new Batcher<SendItem, MessageRow>({
      run: (sends) => this.#acceptGroup(sends),
      runOne: (send) => this.#acceptAlone(send),
      // Enough to amortise a commit, few enough that one group's statements stay small.
      maxBatch: 64,
      // One group at a time: on full cores the sends that arrive while a group commits make the
      // next one larger, which costs less CPU a send than two groups overlapping.
      maxInFlight: 1,
    });
  }

  accept(sender: SendItem['sender'], request: SendItem['request']): Promise<MessageRow> {
    return this.#batcher.submit({ sender, request });
  }

  async #acceptGroup(sends: SendItem[]): Promise<(MessageRow | Error)[]> {
    const outcomes = new Array<MessageRow | Error>(sends.length);
    const alone: number[] = [];
    let together = sends.map((_, index) => index);
    while (together.length > 0) {
      try {
        const answers = await this.#db.transaction((trx) =>
          acceptBatch(
            trx,
            this.#jobs,
            together.map((index) => sends[index]),
            'whole',
            this.#clock(),
          ),
        );
        together.forEach((index, position) => {
          const answer = answers[position];
          outcomes[index] = 'refusal' in answer ? answer.refusal : answer.message;
        });
        break;
      } catch (error) {
        if (!(error instanceof BatchRefused)) throw error;
        const refusing = new Set(error.accountIds);
        const refused = (index: number) => refusing.has(sends[index].sender.account.id);
        if (!together.some(refused)) throw error;
        alone.push(...together.filter(refused));
        together = together.filter((index) => !refused(index));
      }
    }
    for (const index of alone.sort((a, b) => a - b)) {
      outcomes[index] = await this.#acceptAlone(sends[index]).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
    }
    return outcomes;
  }

  #acceptAlone(send: SendItem): Promise<MessageRow> {
    return this.#db.transaction((trx) => acceptMessage(trx, this.#jobs, send.sender, send.request, { now: this.#clock() }));
  }
}
