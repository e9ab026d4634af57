import type { Knex } from 'knex';
import type { MessageRow } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { acceptMessage, acceptMessages, type SingleSend } from './sending.ts';

interface Waiting extends SingleSend {
  resolve: (message: MessageRow) => void;
  reject: (error: unknown) => void;
}

/** Sends one group may hold: enough to amortise a commit, few enough that one group's statements stay small. */
const MAX_GROUP = 64;
/** Groups committing at once. Sends of one account wait on its balance row anyway; two let one group's round trips overlap another's commit. */
const MAX_COMMITTING = 2;

/**
 * Group commit of single sends. A send that arrives while fewer than MAX_COMMITTING groups are
 * committing is committed at once (alone, at low load: nothing waits for company); the sends that
 * arrive meanwhile wait, and the next group takes all of them. So the commits, the balance row's
 * lock and the round trips are shared by as many sends as arrive during one commit, and a send
 * never waits longer than the group ahead of it.
 *
 * Each send keeps its own outcome: acceptMessages refuses one alone for what concerns it alone;
 * when the group as a whole cannot be accepted (a key's limit or the balance reached part way,
 * or any failure), it is rolled back and each send is accepted or refused alone, in arrival order,
 * as if it had come alone.
 */
export class SendGroupCommit {
  readonly #db: Knex;
  readonly #jobs: JobQueue;
  #waiting: Waiting[] = [];
  #committing = 0;

  constructor(db: Knex, jobs: JobQueue) {
    this.#db = db;
    this.#jobs = jobs;
  }

  accept(sender: SingleSend['sender'], request: SingleSend['request']): Promise<MessageRow> {
    return new Promise<MessageRow>((resolve, reject) => {
      this.#waiting.push({ sender, request, resolve, reject });
      this.#commitWaiting();
    });
  }

  #commitWaiting(): void {
    while (this.#committing < MAX_COMMITTING && this.#waiting.length > 0) {
      const group = this.#waiting.splice(0, MAX_GROUP);
      this.#committing += 1;
      void this.#commit(group).finally(() => {
        this.#committing -= 1;
        this.#commitWaiting();
      });
    }
  }

  async #commit(group: Waiting[]): Promise<void> {
    if (group.length > 1) {
      const outcomes = await this.#db.transaction((trx) => acceptMessages(trx, this.#jobs, group)).catch(() => null);
      if (outcomes) {
        group.forEach((send, index) => {
          const outcome = outcomes[index];
          if (outcome instanceof Error) send.reject(outcome);
          else send.resolve(outcome);
        });
        return;
      }
    }
    for (const send of group) {
      await this.#db.transaction((trx) => acceptMessage(trx, this.#jobs, send.sender, send.request)).then(send.resolve, send.reject);
    }
  }
}
