import type { Knex } from 'knex';
import type { AccountRow } from '../db/accounts.ts';
import type { ApiKeyRow } from '../db/api-keys.ts';
import { sideBySide } from '../db/batching.ts';
import type { LedgerChange } from '../db/ledger.ts';
import { insertMessages, type MessageRow, type NewMessage } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { readSendChecks } from '../db/send-checks.ts';
import { sendJobs } from '../db/send-groups.ts';
import type { RouteRow } from '../db/routes.ts';
import { codePointLength, MAX_BODY_CODE_POINTS, planSegments, type SegmentPlan } from './encoding.ts';
import { ApiError, insufficientBalance, invalidRequest } from './errors.ts';
import { recordEvents } from './events.ts';
import { newId } from './ids.ts';
import { applyWhileCovered, moveBalance } from './ledger.ts';
import { checkSendLimits } from './send-limits.ts';
import { multiply, negate } from './money.ts';
import { checkNumber } from './phone-numbers.ts';
import { routesFor } from './routing.ts';

/** Who sends: the account that pays and the key it sends through (its limits apply); no key for Dispatch's own replies on the account's behalf. */
export interface SendingCaller {
  account: AccountRow;
  apiKey: ApiKeyRow | null;
}

export interface SendOptions {
  /**
   * The message is the confirmation of an opt-out keyword, sent once to the number that has
   * just opted out (in the transaction that opted it out): the one message an opted-out
   * number may receive. Nothing else may set it.
   */
  optOutConfirmation?: boolean;
}

interface Common {
  from: string;
  body: string;
  route_id?: number | null;
  reference?: string | null;
}

type FailedItemError = NonNullable<MessageRow['error']>;

function planBody(body: string): SegmentPlan {
  if (codePointLength(body) > MAX_BODY_CODE_POINTS) {
    throw invalidRequest('body', `body must be at most ${MAX_BODY_CODE_POINTS} characters (Unicode code points) long.`);
  }
  return planSegments(body);
}

function requireApprovedSender(approved: Set<string>, from: string): void {
  if (!approved.has(from)) throw invalidRequest('from', `'${from}' is not an approved sender of this account.`, 'sender_not_approved');
}

/** One recipient's destination country, and why it cannot be sent to, checked in the documented order (null when it can). */
function checkRecipient(to: string, blocked: Set<string>, optedOut: Set<string>, routes: RouteRow[]): { country: string | null; problem: FailedItemError | null } {
  // A bulk recipient reaches here as given: one malformed item fails alone, like an impossible number.
  const { country, problem: invalid } = checkNumber(to);
  const refused = (code: string, message: string) => ({ country, problem: { type: 'invalid_request_error' as const, code, message } });
  if (invalid) return refused('number_invalid', invalid);
  if (blocked.has(to)) return refused('recipient_blocklisted', `${to} is blocklisted.`);
  if (optedOut.has(to)) return refused('recipient_opted_out', `${to} opted out of this account's messages.`);
  if (routes.length === 0) return refused('route_invalid', `No eligible route covers ${to}.`);
  return { country, problem: null };
}

/** A single send's recipient problem as its 400: naming `route_id` when the route it named covers nothing, else `to`. */
const singleSendRefusal = (problem: FailedItemError, request: { route_id?: number | null }) =>
  invalidRequest(problem.code === 'route_invalid' && request.route_id != null ? 'route_id' : 'to', problem.message, problem.code);

function newMessage(sender: SendingCaller, request: Common, to: string, country: string | null, plan: SegmentPlan, cost: string, id = newId('msg')) {
  return {
    id,
    account_id: sender.account.id,
    api_key_id: sender.apiKey?.id ?? null,
    to,
    from: request.from,
    body: request.body,
    status: 'pending' as const,
    encoding: plan.encoding,
    segments: plan.segments,
    cost,
    currency: sender.account.currency,
    country,
    route_id: null,
    requested_route_id: request.route_id ?? null,
    error: null,
    reference: request.reference ?? null,
  };
}

/**
 * Stores messages and enqueues the send jobs of those to send, in the accepting transaction, side
 * by side: the jobs carry ids chosen here and wait on nothing the insert answers, so on a
 * pipelining connection (db/connection.ts) both take one round trip. Neither takes a lock that
 * conflicts with the other's or the balance's, so doing them in either order deadlocks no one.
 */
async function storeAndEnqueue(trx: Knex.Transaction, jobs: JobQueue, rows: NewMessage[], sends: { id: string; accountId: string; firstRouteId: number }[]): Promise<MessageRow[]> {
  const groups = sendJobs(sends);
  const [stored] = await sideBySide([
    insertMessages(trx, rows),
    jobs.enqueueMany(trx, 'sendMessage', groups.map(({ data }) => data), (_, index) => groups[index].options),
  ]);
  return stored;
}

interface Charge {
  accountId: string;
  changes: Omit<LedgerChange, 'accountId'>[];
}

/** What accepting a message to `to` takes from its account's balance. */
const debitFor = (messageId: string, cost: string, to: string): Omit<LedgerChange, 'accountId'> => ({ kind: 'debit', amount: negate(cost), messageId, description: `Message to ${to}` });

/**
 * Stores and enqueues the messages, and charges each account, side by side: a charge waits on
 * nothing the insert answers, so on a pipelining connection all of it takes one round trip.
 * Answers the stored rows, then each charge's balance after it (null when it did not cover the
 * changes: nothing was charged, and the caller must roll back). The accounts' rows are locked
 * after the checks' locks and in ascending account order, as every sending transaction locks
 * them, so two transactions never wait on each other's; each is held from its charge to the commit.
 */
async function storeAndCharge(trx: Knex.Transaction, jobs: JobQueue, rows: NewMessage[], sends: { id: string; accountId: string; firstRouteId: number }[], charges: Charge[]): Promise<[MessageRow[], ...(string | null)[]]> {
  const [stored, ...balances] = await sideBySide([
    storeAndEnqueue(trx, jobs, rows, sends),
    ...charges.map(({ accountId, changes }) => moveBalance(trx, jobs, accountId, changes)),
  ]);
  return [stored, ...balances];
}

/**
 * Accepts one message in the caller's transaction: charges it, stores it as pending and enqueues
 * its send job. Any refusal is thrown before anything is written, or rolls the transaction back.
 */
export async function acceptMessage(trx: Knex.Transaction, jobs: JobQueue, sender: SendingCaller, request: Common & { to: string }, options: SendOptions = {}): Promise<MessageRow> {
  const plan = planBody(request.body);
  const checks = await readSendChecks(trx, sender.account.id, [request.from], [request.to], !options.optOutConfirmation);
  requireApprovedSender(checks.approved, request.from);
  const routes = routesFor(checks.routes, request.to, request.route_id);
  const { country, problem } = checkRecipient(request.to, checks.blocked, checks.optedOut, routes);
  if (problem) throw singleSendRefusal(problem, request);
  if (sender.apiKey) await checkSendLimits(trx, sender.apiKey, 1);

  const cost = multiply(routes[0].price_per_segment, plan.segments);
  const message = newMessage(sender, request, request.to, country, plan, cost);
  const charges = cost === '0.0000' ? [] : [{ accountId: sender.account.id, changes: [debitFor(message.id, cost, request.to)] }];
  const [[stored], balance] = await storeAndCharge(trx, jobs, [message], [{ id: message.id, accountId: sender.account.id, firstRouteId: routes[0].id }], charges);
  if (balance === null) {
    const { balance: available } = await trx('accounts').where({ id: sender.account.id }).first('balance');
    throw insufficientBalance(cost, available, sender.account.currency);
  }
  return stored;
}

export interface SingleSend {
  sender: SendingCaller;
  request: Common & { to: string };
}

/**
 * Refused as a group: the sends of `accountIds` may not be accepted beside the others (a key's
 * limit or the balance reached part way). Its caller takes those one by one; the other accounts'
 * sends may still go together, since no account's limits or balance depend on another's.
 */
export class GroupRefused extends Error {
  readonly accountIds: string[];

  constructor(message: string, accountIds: string[]) {
    super(message);
    this.accountIds = accountIds;
  }
}

const refusalOf = (error: unknown): ApiError => {
  if (error instanceof ApiError) return error;
  throw error;
};

/**
 * Accepts several single sends in one transaction, with one statement of each kind for all of
 * them (group commit): one multi-row insert of messages, one of jobs, one ledger write and one
 * balance update per account. A send refused for itself (its body, sender, recipient or route)
 * has that refusal as its outcome and leaves nothing behind, exactly as acceptMessage would
 * refuse it. A refusal that depends on its neighbours (a key's limit, a balance that does not
 * cover every send) throws GroupRefused, naming the accounts concerned, and any other failure
 * throws: the caller then accepts those sends on their own, in order. Locks are taken in the
 * order acceptMessage takes them (numbers, key counts, balance), each kind in ascending order, so
 * that groups never deadlock.
 */
export async function acceptMessages(trx: Knex.Transaction, jobs: JobQueue, sends: SingleSend[]): Promise<(MessageRow | ApiError)[]> {
  const outcomes: (MessageRow | ApiError | undefined)[] = new Array(sends.length);
  const accepted: { index: number; send: SingleSend; country: string | null; plan: SegmentPlan; route: RouteRow; cost: string; id: string }[] = [];
  const accountIds = [...new Set(sends.map(({ sender }) => sender.account.id))].sort();
  for (const accountId of accountIds) {
    const ofAccount = sends.map((send, index) => ({ send, index })).filter(({ send }) => send.sender.account.id === accountId);
    const tos = ofAccount.map(({ send }) => send.request.to);
    const { routes: accountRoutes, approved, blocked, optedOut } = await readSendChecks(trx, accountId, ofAccount.map(({ send }) => send.request.from), tos);
    for (const { send, index } of ofAccount) {
      const { request } = send;
      try {
        const plan = planBody(request.body);
        requireApprovedSender(approved, request.from);
        const routes = routesFor(accountRoutes, request.to, request.route_id);
        const { country, problem } = checkRecipient(request.to, blocked, optedOut, routes);
        if (problem) throw singleSendRefusal(problem, request);
        accepted.push({ index, send, country, plan, route: routes[0], cost: multiply(routes[0].price_per_segment, plan.segments), id: newId('msg') });
      } catch (error) {
        outcomes[index] = refusalOf(error);
      }
    }
  }

  const keys = new Map(accepted.flatMap(({ send }) => (send.sender.apiKey ? [[send.sender.apiKey.id, send.sender.apiKey] as const] : [])));
  for (const keyId of [...keys.keys()].sort()) {
    const count = accepted.filter(({ send }) => send.sender.apiKey?.id === keyId).length;
    await checkSendLimits(trx, keys.get(keyId) as ApiKeyRow, count).catch((error: unknown) => {
      throw new GroupRefused(`a key's limit: ${(error as Error).message}`, [(keys.get(keyId) as ApiKeyRow).account_id]);
    });
  }

  const charges = accountIds
    .map((accountId) => ({
      accountId,
      changes: accepted
        .filter(({ send, cost }) => send.sender.account.id === accountId && cost !== '0.0000')
        .map(({ cost, id, send }) => debitFor(id, cost, send.request.to)),
    }))
    .filter(({ changes }) => changes.length > 0);
  const [rows, ...balances] = await storeAndCharge(
    trx,
    jobs,
    accepted.map(({ send, country, plan, cost, id }) => newMessage(send.sender, send.request, send.request.to, country, plan, cost, id)),
    accepted.map(({ id, send, route }) => ({ id, accountId: send.sender.account.id, firstRouteId: route.id })),
    charges,
  );
  const uncovered = charges.filter((_, index) => balances[index] === null).map(({ accountId }) => accountId);
  if (uncovered.length > 0) throw new GroupRefused('the balance does not cover every send of the group', uncovered);
  const stored = new Map(rows.map((row) => [row.id, row]));
  for (const { index, id } of accepted) outcomes[index] = stored.get(id) as MessageRow;
  return outcomes as (MessageRow | ApiError)[];
}

export interface BulkOutcome {
  messages: MessageRow[];
  accepted: number;
  failed: number;
}

/**
 * Accepts a bulk send in the caller's transaction: each recipient independently, with multi-row
 * inserts and one batched job insert. Recipients that cannot be sent to are stored as failed
 * messages (cost 0) with their error; the balance is charged in request order while it lasts.
 */
export async function acceptBulk(trx: Knex.Transaction, jobs: JobQueue, sender: SendingCaller & { apiKey: ApiKeyRow }, request: Common & { recipients: string[] }): Promise<BulkOutcome> {
  const plan = planBody(request.body);
  const { routes: accountRoutes, approved, blocked, optedOut } = await readSendChecks(trx, sender.account.id, [request.from], request.recipients);
  requireApprovedSender(approved, request.from);
  if (request.route_id != null && !accountRoutes.some((route) => route.id === request.route_id)) {
    throw invalidRequest('route_id', `Route ${request.route_id} is not an active route of this account.`, 'route_invalid');
  }

  const items = request.recipients.map((to) => {
    const routes = routesFor(accountRoutes, to, request.route_id);
    const { country, problem } = checkRecipient(to, blocked, optedOut, routes);
    return { to, country, problem, routeId: routes[0]?.id, cost: problem ? '0.0000' : multiply(routes[0].price_per_segment, plan.segments), id: newId('msg') };
  });
  const sendable = items.filter((item) => item.problem === null);
  const allowance = await checkSendLimits(trx, sender.apiKey, sendable.length);

  const charged = await applyWhileCovered(
    trx,
    jobs,
    sender.account.id,
    sendable.map((item) => debitFor(item.id, item.cost, item.to)),
  );
  sendable.forEach((item, index) => {
    if (!charged[index]) item.problem = { type: 'balance_error', code: 'insufficient_balance', message: 'The balance did not cover this recipient.' };
  });
  const accepted = items.filter((item) => item.problem === null);
  if (accepted.length === 0 && sendable.length > 0) {
    const { balance } = await trx('accounts').where({ id: sender.account.id }).first('balance');
    throw insufficientBalance(sendable[0].cost, balance, sender.account.currency);
  }
  // Recipients the balance did not cover are refused after all: they do not count against the key's limits.
  await allowance.giveBack(sendable.length - accepted.length);

  const now = new Date();
  const rows = items.map((item) => {
    const message = newMessage(sender, request, item.to, item.country, plan, item.problem ? '0.0000' : item.cost, item.id);
    return item.problem ? { ...message, status: 'failed' as const, error: item.problem, failed_at: now } : message;
  });
  const stored = await storeAndEnqueue(trx, jobs, rows, accepted.map((item) => ({ id: item.id, accountId: sender.account.id, firstRouteId: item.routeId as number })));
  await recordEvents(trx, jobs, stored.filter((message) => message.status === 'failed').map((message) => ({ message, type: 'message.failed' as const })));
  const byId = new Map(stored.map((message) => [message.id, message]));
  return { messages: items.map((item) => byId.get(item.id) as MessageRow), accepted: accepted.length, failed: items.length - accepted.length };
}

