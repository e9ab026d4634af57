import type { Knex } from 'knex';
import { findAccount, type AccountRow } from '../db/accounts.ts';
import type { ApiKeyRow } from '../db/api-keys.ts';
import { sideBySide } from '../db/statements.ts';
import type { LedgerChange } from '../db/ledger.ts';
import { insertMessages, type MessageRow, type NewMessage } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { readSendChecks, type SendChecks } from '../db/send-checks.ts';
import { sendJobs } from '../db/send-groups.ts';
import type { RouteRow } from '../db/routes.ts';
import { codePointLength, MAX_BODY_CODE_POINTS, planSegments, type SegmentPlan } from './encoding.ts';
import { ApiError, insufficientBalance, invalidRequest } from './errors.ts';
import { recordEvents } from './events.ts';
import { newId } from './ids.ts';
import { applyWhileCovered, moveBalance } from './ledger.ts';
import { checkSendLimits, type SendAllowance } from './send-limits.ts';
import { add, multiply, negate } from './money.ts';
import { checkNumber } from './phone-numbers.ts';
import { routesFor } from './routing.ts';

/** Who sends: the account that pays and the key it sends through (its limits apply); no key for Dispatch's own replies on the account's behalf. */
export interface SendingCaller {
  account: AccountRow;
  apiKey: ApiKeyRow | null;
}

export interface SendRequest {
  to: string;
  from: string;
  body: string;
  route_id?: number | null;
  reference?: string | null;
}

/** One message to accept: a single send, one of a group's, or one recipient of a bulk. */
export interface SendItem {
  sender: SendingCaller;
  request: SendRequest;
  /**
   * The message is the confirmation of an opt-out keyword, sent once to the number that has
   * just opted out (in the transaction that opted it out): the one message an opted-out
   * number may receive. Nothing else may set it.
   */
  optOutConfirmation?: boolean;
}

/** A message accepted (pending, charged, its send job enqueued), or why it was refused. */
export type SendOutcome = { message: MessageRow } | { refusal: ApiError; message?: MessageRow };

/**
 * How a batch meets the refusals that depend on its neighbours, a key's limit and the balance:
 * - `whole`: every account's sends are charged together or not at all; an account whose key's
 *   limit or balance does not cover them all throws BatchRefused (a single send, a group).
 * - `while-covered`: in order while the balance lasts, the rest refused each; a key's limit
 *   still refuses the whole batch (a bulk). Refused items are then stored as failed messages
 *   with a `message.failed` event, so that the answer lists every recipient.
 */
export type BatchPolicy = 'whole' | 'while-covered';

/**
 * The sends of `accountIds` may not be accepted beside the others: a key's limit or the balance
 * reached part way. `refusal` is the answer a batch of those sends alone would get; the other
 * accounts' sends may still go together, since no account's limits or balance depend on another's.
 */
export class BatchRefused extends Error {
  readonly accountIds: string[];
  readonly refusal: ApiError;

  constructor(refusal: ApiError, accountIds: string[]) {
    super(refusal.message);
    this.refusal = refusal;
    this.accountIds = accountIds;
  }
}

/** Refusals of the request itself rather than of a recipient: in a bulk they refuse the whole request. */
export const REQUEST_PARAMS = new Set(['body', 'from', 'route_id']);

function planBody(body: string): SegmentPlan {
  if (codePointLength(body) > MAX_BODY_CODE_POINTS) {
    throw invalidRequest('body', `body must be at most ${MAX_BODY_CODE_POINTS} characters (Unicode code points) long.`);
  }
  return planSegments(body);
}

/** An item that passed the checks of its own: what it will cost, and the route it is offered to first. */
interface Checked {
  index: number;
  item: SendItem;
  plan: SegmentPlan;
  country: string | null;
  route: RouteRow;
  cost: string;
  id: string;
}

/**
 * The checks of one send that concern it alone, in the order openapi.yaml documents: the body,
 * the sender, the requested route, the number, the blocklist, opt-outs, and a route that covers
 * the number. Throws the refusal; a refusal of the number carries its country for the record.
 */
function checkItem(item: SendItem, checks: SendChecks, plans: Map<string, SegmentPlan>): Omit<Checked, 'index' | 'item' | 'id'> {
  const { request } = item;
  let plan = plans.get(request.body);
  if (plan === undefined) plans.set(request.body, (plan = planBody(request.body)));
  if (!checks.approved.has(request.from)) throw invalidRequest('from', `'${request.from}' is not an approved sender of this account.`, 'sender_not_approved');
  if (request.route_id != null && !checks.routes.some((route) => route.id === request.route_id)) {
    throw invalidRequest('route_id', `Route ${request.route_id} is not an active route of this account.`, 'route_invalid');
  }
  const { country, problem: invalid } = checkNumber(request.to);
  const refuse = (code: string, message: string) => Object.assign(invalidRequest('to', message, code), { country });
  if (invalid) throw refuse('number_invalid', invalid);
  if (checks.blocked.has(request.to)) throw refuse('recipient_blocklisted', `${request.to} is blocklisted.`);
  if (!item.optOutConfirmation && checks.optedOut.has(request.to)) throw refuse('recipient_opted_out', `${request.to} opted out of this account's messages.`);
  const [route] = routesFor(checks.routes, request.to, request.route_id);
  if (!route) throw refuse('route_invalid', `No eligible route covers ${request.to}.`);
  return { plan, country, route, cost: multiply(route.price_per_segment, plan.segments) };
}

function newMessage(item: SendItem, plan: SegmentPlan, country: string | null, cost: string, id: string): NewMessage {
  const { sender, request } = item;
  return {
    id,
    account_id: sender.account.id,
    api_key_id: sender.apiKey?.id ?? null,
    to: request.to,
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

/** What accepting a message to `to` takes from its account's balance. */
const debitFor = ({ id, cost, item }: Checked): Omit<LedgerChange, 'accountId'> => ({
  kind: 'debit',
  amount: negate(cost),
  messageId: id,
  description: `Message to ${item.request.to}`,
});

const BALANCE_REFUSAL = { type: 'balance_error' as const, code: 'insufficient_balance', message: 'The balance did not cover this recipient.' };

async function insufficientFor(trx: Knex.Transaction, account: AccountRow, cost: string): Promise<ApiError> {
  const current = await findAccount(trx, account.id);
  return insufficientBalance(cost, current?.balance ?? '0', account.currency);
}

/**
 * Accepts a batch of sends in the caller's transaction, with one statement of each kind for all
 * of them: one read of each account's checks, one count per key, one multi-row insert of
 * messages, one of jobs, and one ledger write and balance update per account. A single send is a
 * batch of one, a group commit a batch of many single sends, a bulk a batch of one request's
 * recipients. Each item answers its own outcome: a refusal that concerns the item alone never
 * changes another's answer. Refusals that depend on the neighbours follow `policy`.
 *
 * Locks are taken in one order by every sending transaction, so that none waits on another's:
 * the numbers' opt-out locks account by account in ascending order, then the keys' counts in
 * ascending order, then the balances in ascending order, each held to the commit.
 */
export async function acceptBatch(trx: Knex.Transaction, jobs: JobQueue, items: SendItem[], policy: BatchPolicy): Promise<SendOutcome[]> {
  const outcomes = new Array<SendOutcome>(items.length);
  const refusedRows: { index: number; row: NewMessage }[] = [];
  const refuse = (index: number, refusal: ApiError, plan?: SegmentPlan, country: string | null = null) => {
    outcomes[index] = { refusal };
    // A refusal of the request itself is no recipient's failure: a bulk answers it whole.
    if (policy === 'while-covered' && plan && !REQUEST_PARAMS.has(refusal.param ?? '')) {
      const row = newMessage(items[index], plan, country, '0.0000', newId('msg'));
      // A stored refusal is of a recipient (invalid_request_error) or of the balance.
      const type = refusal.type === 'balance_error' ? 'balance_error' : 'invalid_request_error';
      refusedRows.push({ index, row: { ...row, status: 'failed', error: { type, code: refusal.code, message: refusal.message }, failed_at: new Date() } });
    }
  };

  const checked: Checked[] = [];
  const plans = new Map<string, SegmentPlan>();
  const byAccount = Map.groupBy(items.entries(), ([, item]) => item.sender.account.id);
  for (const accountId of [...byAccount.keys()].sort()) {
    const ofAccount = byAccount.get(accountId)!;
    const checkOptOuts = ofAccount.some(([, item]) => !item.optOutConfirmation);
    const checks = await readSendChecks(
      trx,
      accountId,
      ofAccount.map(([, item]) => item.request.from),
      ofAccount.map(([, item]) => item.request.to),
      checkOptOuts,
    );
    for (const [index, item] of ofAccount) {
      try {
        checked.push({ index, item, ...checkItem(item, checks, plans), id: newId('msg') });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        refuse(index, error, plans.get(item.request.body), (error as ApiError & { country?: string | null }).country ?? null);
      }
    }
  }

  const allowances = new Map<string, SendAllowance>();
  const keys = new Map(checked.flatMap(({ item }) => (item.sender.apiKey ? [[item.sender.apiKey.id, item.sender.apiKey] as const] : [])));
  for (const keyId of [...keys.keys()].sort()) {
    const key = keys.get(keyId)!;
    try {
      allowances.set(keyId, await checkSendLimits(trx, key, checked.filter(({ item }) => item.sender.apiKey?.id === keyId).length));
    } catch (error) {
      if (error instanceof ApiError) throw new BatchRefused(error, [key.account_id]);
      throw error;
    }
  }

  let accepted = checked;
  if (policy === 'while-covered') accepted = await chargeWhileCovered(trx, jobs, checked, allowances, refuse);

  const charges = policy === 'whole' ? chargesByAccount(accepted) : [];
  const groups = sendJobs(accepted.map(({ id, item, route }) => ({ id, accountId: item.sender.account.id, firstRouteId: route.id })));
  // Side by side: on a pipelining connection (db/connection.ts) the insert, the jobs and the
  // charges take one round trip; none waits on what another answers, and none takes a lock that
  // conflicts with another's.
  const [stored, , ...balances] = await sideBySide([
    insertMessages(trx, [
      ...accepted.map(({ item, plan, country, cost, id }) => newMessage(item, plan, country, cost, id)),
      ...refusedRows.map(({ row }) => row),
    ]),
    jobs.enqueueMany(
      trx,
      'sendMessage',
      groups.map(({ data }) => data),
      (_, index) => groups[index].options,
    ),
    ...charges.map(({ accountId, changes }) => moveBalance(trx, jobs, accountId, changes)),
  ]);
  const uncovered = charges.filter((_, index) => balances[index] === null);
  if (uncovered.length > 0) {
    const [first] = uncovered;
    throw new BatchRefused(
      await insufficientFor(trx, first.account, first.total),
      uncovered.map(({ accountId }) => accountId),
    );
  }

  const rows = new Map(stored.map((row) => [row.id, row]));
  for (const { index, id } of accepted) outcomes[index] = { message: rows.get(id)! };
  for (const { index, row } of refusedRows) outcomes[index] = { ...outcomes[index], message: rows.get(row.id)! };
  await recordEvents(
    trx,
    jobs,
    refusedRows.map(({ row }) => ({ message: rows.get(row.id)!, type: 'message.failed' as const })),
  );
  return outcomes;
}

/** Each account's debits, and their total, for the accounts whose sends cost anything. */
function chargesByAccount(accepted: Checked[]) {
  return [...Map.groupBy(accepted, ({ item }) => item.sender.account.id).entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([accountId, ofAccount]) => ({
      accountId,
      account: ofAccount[0].item.sender.account,
      changes: ofAccount.filter(({ cost }) => cost !== '0.0000').map(debitFor),
      total: ofAccount.reduce((sum, { cost }) => add(sum, cost), '0.0000'),
    }))
    .filter(({ changes }) => changes.length > 0);
}

/**
 * Charges each account's sends in order while its balance covers them; the rest are refused
 * each, and no longer count against their key's limits. When the balance covers none of an
 * account's sends, the batch is refused with 402.
 */
async function chargeWhileCovered(
  trx: Knex.Transaction,
  jobs: JobQueue,
  checked: Checked[],
  allowances: Map<string, SendAllowance>,
  refuse: (index: number, refusal: ApiError, plan: SegmentPlan, country: string | null) => void,
): Promise<Checked[]> {
  const accepted: Checked[] = [];
  for (const [accountId, ofAccount] of [...Map.groupBy(checked, ({ item }) => item.sender.account.id).entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const covered = await applyWhileCovered(trx, jobs, accountId, ofAccount.map(debitFor));
    if (!covered.includes(true)) throw new BatchRefused(await insufficientFor(trx, ofAccount[0].item.sender.account, ofAccount[0].cost), [accountId]);
    ofAccount.forEach((sent, position) => {
      if (covered[position]) accepted.push(sent);
      else refuse(sent.index, new ApiError(402, BALANCE_REFUSAL.type, BALANCE_REFUSAL.code, BALANCE_REFUSAL.message), sent.plan, sent.country);
    });
    for (const [keyId, allowance] of allowances) {
      await allowance.giveBack(ofAccount.filter((sent, position) => !covered[position] && sent.item.sender.apiKey?.id === keyId).length);
    }
  }
  return accepted.sort((a, b) => a.index - b.index);
}

/** The answer of a batch of one: its message, or its refusal thrown. */
async function acceptOne(trx: Knex.Transaction, jobs: JobQueue, item: SendItem): Promise<MessageRow> {
  try {
    const [outcome] = await acceptBatch(trx, jobs, [item], 'whole');
    if ('refusal' in outcome) throw outcome.refusal;
    return outcome.message;
  } catch (error) {
    throw error instanceof BatchRefused ? error.refusal : error;
  }
}

/**
 * Accepts one message in the caller's transaction: charges it, stores it as pending and enqueues
 * its send job. Any refusal is thrown before anything is written, or rolls the transaction back.
 */
export function acceptMessage(
  trx: Knex.Transaction,
  jobs: JobQueue,
  sender: SendingCaller,
  request: SendRequest,
  options: { optOutConfirmation?: boolean } = {},
): Promise<MessageRow> {
  return acceptOne(trx, jobs, { sender, request, ...options });
}

export interface BulkOutcome {
  messages: MessageRow[];
  accepted: number;
  failed: number;
}

/**
 * Accepts a bulk send in the caller's transaction: each recipient is an item of one batch.
 * Recipients that cannot be sent to are stored as failed messages (cost 0) with their error;
 * the balance is charged in request order while it lasts. A refusal of the request itself (its
 * body, sender or route) refuses the whole bulk.
 */
export async function acceptBulk(
  trx: Knex.Transaction,
  jobs: JobQueue,
  sender: SendingCaller,
  request: Omit<SendRequest, 'to'> & { recipients: string[] },
): Promise<BulkOutcome> {
  const { recipients, ...common } = request;
  let outcomes: SendOutcome[];
  try {
    outcomes = await acceptBatch(
      trx,
      jobs,
      recipients.map((to) => ({ sender, request: { ...common, to } })),
      'while-covered',
    );
  } catch (error) {
    throw error instanceof BatchRefused ? error.refusal : error;
  }
  const ofRequest = outcomes.find((outcome) => 'refusal' in outcome && REQUEST_PARAMS.has(outcome.refusal.param ?? ''));
  if (ofRequest && 'refusal' in ofRequest) throw ofRequest.refusal;
  const failed = outcomes.filter((outcome) => 'refusal' in outcome).length;
  return { messages: outcomes.map((outcome) => outcome.message!), accepted: outcomes.length - failed, failed };
}
