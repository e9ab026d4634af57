import type { Knex } from 'knex';
import { findAccount } from '../db/accounts.ts';
import { findInboundByProviderId, inboundNumberHolder, insertInboundMessage, type InboundEncoding, type InboundMessageRow } from '../db/inbound-messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { planSegments } from './encoding.ts';
import { ApiError, invalidRequest } from './errors.ts';
import { recordSubjectEvents } from './events.ts';
import { inboundMessageView } from './inbound-view.ts';
import { newId, randomBase62 } from './ids.ts';
import { keywordSettingsOf, matchKeyword, replyText, type KeywordKind } from './keywords.ts';
import { optIn, optOut } from './opt-outs.ts';
import { getRoute } from './routes.ts';
import { acceptMessage } from './sending.ts';

export interface InboundInput {
  routeId: number;
  /** With routeId, the dedupe key: a repeat of the same (route, id) is stored once. */
  providerMessageId: string;
  /** The handset, E.164 with '+'. */
  from: string;
  /** The number it was sent to (E.164 with '+', or a short code's digits). */
  to: string;
  body: string;
  encoding: InboundEncoding;
  /** Parts received (1 when not concatenated). */
  segments: number;
  /** False: a concatenated message stored after the timeout with parts missing. */
  complete: boolean;
  receivedAt: Date;
}

/** Where an auto-reply that could not be sent is reported; the inbound message is stored regardless. */
export interface InboundLog {
  warn: (details: Record<string, unknown>, message: string) => void;
}

const UNLOGGED: InboundLog = { warn: () => {} };

/**
 * In the caller's transaction: stores the message once, then (first time only) emits
 * message.received and acts on a keyword. Returns whether it was new.
 *
 * A message to a number no account holds is stored for the operator (account null), with no
 * event and no keyword action. A keyword is acted on only when the whole message is one; an
 * incomplete message is never taken for a keyword, since its missing parts may have said more.
 */
export async function recordInbound(trx: Knex.Transaction, jobs: JobQueue, input: InboundInput, log: InboundLog = UNLOGGED): Promise<boolean> {
  const holder = await inboundNumberHolder(trx, input.to);
  const settings = holder ? await keywordSettingsOf(trx, holder.account_id) : null;
  const match = settings && input.complete ? matchKeyword(settings, input.body) : null;
  const stored = await insertInboundMessage(trx, {
    id: newId('inb'),
    account_id: holder?.account_id ?? null,
    route_id: input.routeId,
    provider_message_id: input.providerMessageId,
    from: input.from,
    to: input.to,
    body: input.body,
    encoding: input.encoding,
    segments: input.segments,
    complete: input.complete,
    keyword: match?.keyword ?? null,
    received_at: input.receivedAt,
  });
  if (!stored || !holder || !settings) return stored !== null;

  await recordSubjectEvents(trx, jobs, [{ accountId: holder.account_id, type: 'message.received', data: { ...inboundMessageView(stored) } }]);
  if (match && (await applyKeyword(trx, jobs, holder.account_id, stored.from, match))) {
    await sendReply(trx, jobs, stored, holder.sender_id, match.kind, replyText(settings, match.kind), log);
  }
  return true;
}

/**
 * Opts the sender out or in as the keyword says; answers whether to reply. A repeated STOP from
 * a number already opted out gets no second confirmation: the one message an opted-out number
 * may receive is the confirmation of its opt-out.
 */
async function applyKeyword(
  trx: Knex.Transaction,
  jobs: JobQueue,
  accountId: string,
  number: string,
  match: { kind: KeywordKind; keyword: string },
): Promise<boolean> {
  const change = { source: 'keyword' as const, keyword: match.keyword };
  if (match.kind === 'opt_out') return optOut(trx, jobs, accountId, number, change);
  if (match.kind === 'opt_in') await optIn(trx, jobs, accountId, number, change);
  return true;
}

/**
 * The keyword's confirmation or help text, as an ordinary outbound message (billed, listed,
 * reported) from the number that received the keyword. In a savepoint: when the send is refused
 * (no balance, no route, the number opted out by the account), the inbound message and the
 * opt-out stand, and the refusal is logged.
 */
async function sendReply(
  trx: Knex.Transaction,
  jobs: JobQueue,
  inbound: InboundMessageRow,
  from: string,
  kind: KeywordKind,
  body: string,
  log: InboundLog,
): Promise<void> {
  const accountId = inbound.account_id as string;
  try {
    await trx.transaction(async (savepoint) => {
      const account = await findAccount(savepoint, accountId);
      await acceptMessage(savepoint, jobs, { account: account!, apiKey: null }, { from, to: inbound.from, body }, { optOutConfirmation: kind === 'opt_out' });
    });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    log.warn({ account_id: accountId, inbound_message_id: inbound.id, keyword: inbound.keyword, to: inbound.from, err: error }, 'keyword auto-reply not sent');
  }
}

/** Its own transaction; resolves only once committed (so a provider may acknowledge), rejects otherwise. */
export async function receiveInbound(db: Knex, jobs: JobQueue, input: InboundInput, log: InboundLog = UNLOGGED): Promise<boolean> {
  return db.transaction((trx) => recordInbound(trx, jobs, input, log));
}

/**
 * A handset's message arriving on a simulator route, for demos and tests: received as a
 * provider's would be, under a provider id made up for it. Answers the stored message.
 */
export async function simulateInbound(
  db: Knex,
  jobs: JobQueue,
  routeId: number,
  message: { from: string; to: string; body: string },
  log: InboundLog,
): Promise<InboundMessageRow> {
  const route = await getRoute(db, routeId);
  if (route.provider !== 'simulator') {
    throw invalidRequest('id', `Route ${routeId} is an ${route.provider} route: only a simulator route takes simulated inbound messages.`);
  }
  const { encoding, segments } = planSegments(message.body);
  const providerMessageId = `sim-in-${randomBase62(16)}`;
  await receiveInbound(db, jobs, { routeId, providerMessageId, ...message, encoding, segments, complete: true, receivedAt: new Date() }, log);
  return (await findInboundByProviderId(db, routeId, providerMessageId))!;
}
