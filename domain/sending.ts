import type { Knex } from 'knex';
import { findAccount, type AccountRow } from '../db/accounts.ts';
import { sideBySide } from '../db/statements.ts';
import type { LedgerChange } from '../db/ledger.ts';
import { insertMessages, type MessageRow, type NewMessage } from '../db/messages.ts';
import type { JobQueue } from '../db/queues.ts';
import { sendJobs } from '../db/send-groups.ts';
import type { BodyToSend } from './smart-encoding.ts';
import { ApiError, insufficientBalance } from './errors.ts';
import { recordEvents } from './events.ts';
import { newId } from './ids.ts';
import { applyWhileCovered, moveBalance } from './ledger.ts';
import { checkBatch, type Checked, type SendingCaller, type SendItem, type SendRequest } from './send-checks.ts';
import { checkSendLimits, type SendAllowance } from './send-limits.ts';
import { add, negate } from './money.ts';

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
export const REQUEST_PARAMS = new Set(['body', 'send_at', 'send_window.start', 'send_window.end', 'send_window.time_zone', 'from', 'route_id']);

/** The row of a message: one that passed its checks, or a refused bulk item (no send time, no window). */
function newMessage({ item, planned, country, cost, id, sendAt, window }: Omit<Checked, 'index' | 'route'>): NewMessage {
  const { body, plan, smartEncoded } = planned;
  const { sender, request } = item;
  return {
    id,
    account_id: sender.account.id,
    api_key_id: sender.apiKey?.id ?? null,
    to: request.to,
    from: request.from,
    body,
    smart_encoded: smartEncoded,
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
    send_at: sendAt,
    validity_period: request.validity_period ?? null,
    bulk_id: item.bulkId ?? null,
    send_window: window,
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
export async function acceptBatch(trx: Knex.Transaction, jobs: JobQueue, items: SendItem[], policy: BatchPolicy, now = new Date()): Promise<SendOutcome[]> {
  const outcomes = new Array<SendOutcome>(items.length);
  const refusedRows: { index: number; row: NewMessage }[] = [];
  const refuse = (index: number, refusal: ApiError, planned?: BodyToSend, country: string | null = null) => {
    outcomes[index] = { refusal };
    // A refusal of the request itself is no recipient's failure: a bulk answers it whole.
    if (policy === 'while-covered' && planned && !REQUEST_PARAMS.has(refusal.param ?? '')) {
      const row = newMessage({ item: items[index], planned, country, cost: '0.0000', id: newId('msg'), sendAt: null, window: null });
      // A stored refusal is of a recipient (invalid_request_error) or of the balance.
      const type = refusal.type === 'balance_error' ? 'balance_error' : 'invalid_request_error';
      refusedRows.push({ index, row: { ...row, status: 'failed', error: { type, code: refusal.code, message: refusal.message }, failed_at: now } });
    }
  };

  const { checked, refused } = await checkBatch(trx, items, now);
  for (const { index, refusal, planned, country } of refused) refuse(index, refusal, planned, country);

  const allowances = new Map<string, SendAllowance>();
  const keys = new Map(checked.flatMap(({ item }) => (item.sender.apiKey ? [[item.sender.apiKey.id, item.sender.apiKey] as const] : [])));
  for (const keyId of [...keys.keys()].sort()) {
    const key = keys.get(keyId)!;
    try {
      allowances.set(keyId, await checkSendLimits(trx, key, checked.filter(({ item }) => item.sender.apiKey?.id === keyId).length, now));
    } catch (error) {
      if (error instanceof ApiError) throw new BatchRefused(error, [key.account_id]);
      throw error;
    }
  }

  let accepted = checked;
  if (policy === 'while-covered') accepted = await chargeWhileCovered(trx, jobs, checked, allowances, refuse);

  const charges = policy === 'whole' ? chargesByAccount(accepted) : [];
  const groups = sendJobs(accepted.map(({ id, item, route, sendAt }) => ({ id, accountId: item.sender.account.id, firstRouteId: route.id, sendAt })));
  // Side by side: on a pipelining connection (db/connection.ts) the insert, the jobs and the
  // charges take one round trip; none waits on what another answers, and none takes a lock that
  // conflicts with another's.
  const [stored, , ...balances] = await sideBySide([
    insertMessages(trx, [...accepted.map(newMessage), ...refusedRows.map(({ row }) => row)]),
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
  refuse: (index: number, refusal: ApiError, planned: BodyToSend, country: string | null) => void,
): Promise<Checked[]> {
  const accepted: Checked[] = [];
  for (const [accountId, ofAccount] of [...Map.groupBy(checked, ({ item }) => item.sender.account.id).entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const covered = await applyWhileCovered(trx, jobs, accountId, ofAccount.map(debitFor));
    if (!covered.includes(true)) throw new BatchRefused(await insufficientFor(trx, ofAccount[0].item.sender.account, ofAccount[0].cost), [accountId]);
    ofAccount.forEach((sent, position) => {
      if (covered[position]) accepted.push(sent);
      else refuse(sent.index, new ApiError(402, BALANCE_REFUSAL.type, BALANCE_REFUSAL.code, BALANCE_REFUSAL.message), sent.planned, sent.country);
    });
    for (const [keyId, allowance] of allowances) {
      await allowance.giveBack(ofAccount.filter((sent, position) => !covered[position] && sent.item.sender.apiKey?.id === keyId).length);
    }
  }
  return accepted.sort((a, b) => a.index - b.index);
}

/** The answer of a batch of one: its message, or its refusal thrown. */
async function acceptOne(trx: Knex.Transaction, jobs: JobQueue, item: SendItem, now: Date): Promise<MessageRow> {
  try {
    const [outcome] = await acceptBatch(trx, jobs, [item], 'whole', now);
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
  { optOutConfirmation, now = new Date() }: { optOutConfirmation?: boolean; now?: Date } = {},
): Promise<MessageRow> {
  return acceptOne(trx, jobs, { sender, request, optOutConfirmation }, now);
}

export interface BulkOutcome {
  bulkId: string;
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
  now = new Date(),
): Promise<BulkOutcome> {
  const { recipients, ...common } = request;
  const bulkId = newId('bulk');
  let outcomes: SendOutcome[];
  try {
    outcomes = await acceptBatch(
      trx,
      jobs,
      recipients.map((to) => ({ sender, request: { ...common, to }, bulkId })),
      'while-covered',
      now,
    );
  } catch (error) {
    throw error instanceof BatchRefused ? error.refusal : error;
  }
  const ofRequest = outcomes.find((outcome) => 'refusal' in outcome && REQUEST_PARAMS.has(outcome.refusal.param ?? ''));
  if (ofRequest && 'refusal' in ofRequest) throw ofRequest.refusal;
  const failed = outcomes.filter((outcome) => 'refusal' in outcome).length;
  return { bulkId, messages: outcomes.map((outcome) => outcome.message!), accepted: outcomes.length - failed, failed };
}
