import type { Knex } from 'knex';
import { beginSubmission, beginSubmissions } from '../db/message-attempts.ts';
import { findMessagesToSubmit, type MessageToSubmit } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { sendingStateOfAccounts, type AccountSendingState } from '../db/routes.ts';
import { Batcher } from '../lib/batcher.ts';
import { recordAcceptances, type Acceptance } from './message-outcomes.ts';
import { refusalsAtSending } from './standing.ts';

// Enough to amortise a round trip over the messages a process has in flight; one batch of a kind
// at a time, so that the messages that come meanwhile make the next batch larger.
const BATCH = { maxBatch: 64, maxInFlight: 1 };

/**
 * The reads and writes around each submission that every message of the send worker makes,
 * shared by the messages in flight in this process (lib/batcher.ts): the message, and whether
 * its account may send and by which routes, read, a scheduled one's standing checked again, the submission begun, and the upstream's
 * acceptance recorded, each for all of them with one statement (one transaction for the
 * acceptances) instead of one each.
 */
export class SubmissionBatches {
  readonly messages: Batcher<string, MessageToSubmit | undefined>;
  readonly accounts: Batcher<string, AccountSendingState>;
  /** A scheduled message's standing when it goes (domain/standing.ts). */
  readonly refusals: Batcher<MessageToSubmit, Awaited<ReturnType<typeof refusalsAtSending>>[number]>;
  readonly begun: Batcher<{ messageId: string; routeId: number }, number | undefined>;
  readonly acceptances: Batcher<Acceptance, void>;

  constructor(db: Knex, jobs: JobQueue) {
    this.messages = new Batcher({
      ...BATCH,
      run: async (ids) => {
        const found = new Map((await findMessagesToSubmit(db, ids)).map((message) => [message.id, message]));
        return ids.map((id) => found.get(id));
      },
      runOne: async (id) => (await findMessagesToSubmit(db, [id]))[0],
    });
    this.accounts = new Batcher({
      ...BATCH,
      run: (accountIds) => sendingStateOfAccounts(db, accountIds),
      runOne: async (accountId) => (await sendingStateOfAccounts(db, [accountId]))[0],
    });
    this.refusals = new Batcher({ ...BATCH, run: (messages) => refusalsAtSending(db, messages) });
    this.begun = new Batcher({
      ...BATCH,
      run: (submissions) => beginSubmissions(db, submissions),
      runOne: ({ messageId, routeId }) => beginSubmission(db, messageId, routeId),
    });
    this.acceptances = new Batcher({
      ...BATCH,
      run: (acceptances) => recordAcceptances(db, jobs, acceptances),
      runOne: async (acceptance) => {
        await recordAcceptances(db, jobs, [acceptance]);
      },
    });
  }
}
