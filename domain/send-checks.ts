import type { Knex } from 'knex';
import type { components } from '../sdk/generated/openapi.ts';
import type { AccountRow } from '../db/accounts.ts';
import type { ApiKeyRow } from '../db/api-keys.ts';
import type { RouteRow } from '../db/routes.ts';
import { readSendChecks, type SendChecks } from '../db/send-checks.ts';
import { codePointLength, MAX_BODY_CODE_POINTS, planSegments } from './encoding.ts';
import { ApiError, invalidRequest } from './errors.ts';
import { newId } from './ids.ts';
import { multiply } from './money.ts';
import { checkNumber } from './phone-numbers.ts';
import { routesFor } from './routing.ts';
import { sendTimeOf } from './schedule.ts';
import { smartEncode, type BodyToSend } from './smart-encoding.ts';
import { sendTimeInWindow, windowOfSend, type AppliedWindow, type SendWindow } from './send-window.ts';
import { recipientRefusal, senderRefusal } from './standing.ts';

/** Who sends: the account that pays and the key it sends through (its limits apply); no key for Dispatch's own replies on the account's behalf. */
export interface SendingCaller {
  account: AccountRow;
  apiKey: ApiKeyRow | null;
}

/** One message as `POST /messages/send` takes it (the document's schema, so that a new field is declared once). */
export type SendRequest = components['schemas']['SendMessageRequest'];

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
  /** The bulk request the message is one recipient of. */
  bulkId?: string;
}

/**
 * The body a send will carry and its segments, from which its cost comes. The limit counts the
 * body as given: smart encoding may lengthen it (an ellipsis becomes three full stops), never
 * into more segments.
 */
function planBody(body: string, smartEncoding: boolean): BodyToSend {
  if (codePointLength(body) > MAX_BODY_CODE_POINTS) {
    throw invalidRequest('body', `body must be at most ${MAX_BODY_CODE_POINTS} characters (Unicode code points) long.`);
  }
  const plan = planSegments(body);
  return smartEncoding ? smartEncode(body, plan) : { body, plan, smartEncoded: false };
}

/** Whether a send replaces GSM-7 look-alikes: as its request says, or else as its account's setting does. */
const smartEncodingOf = (item: SendItem, checks: SendChecks): boolean => item.request.smart_encoding ?? checks.smartEncoding;

/** Sends of a batch that share a body and a smart encoding share its plan. */
type PlannedBodies = Map<string, BodyToSend>;

const bodyKey = (item: SendItem, checks: SendChecks): string => `${smartEncodingOf(item, checks) ? 'smart' : 'as-given'}:${item.request.body}`;

/** An item that passed the checks of its own: what it will cost, and the route it is offered to first. */
export interface Checked {
  index: number;
  item: SendItem;
  planned: BodyToSend;
  country: string | null;
  route: RouteRow;
  cost: string;
  sendAt: Date | null;
  window: AppliedWindow | null;
  id: string;
}

/**
 * The checks of one send that concern it alone, in the order openapi.yaml documents: the body,
 * the send time, the sender, the requested route, the number, the blocklist, opt-outs, and a
 * route that covers the number. Throws the refusal; a refusal of the number carries its country
 * for the record.
 */
function checkItem(item: SendItem, checks: SendChecks, plans: PlannedBodies, now: Date): Omit<Checked, 'index' | 'item' | 'id'> {
  const { request } = item;
  const key = bodyKey(item, checks);
  let planned = plans.get(key);
  if (planned === undefined) plans.set(key, (planned = planBody(request.body, smartEncodingOf(item, checks))));
  let sendAt = sendTimeOf(request.send_at, now);
  const asked = windowOfSend(request.send_window, checks.sendWindow, item.sender.apiKey !== null);
  const ofSender = senderRefusal(request.from, checks);
  if (ofSender) throw ofSender;
  if (request.route_id != null && !checks.routes.some((route) => route.id === request.route_id)) {
    throw invalidRequest('route_id', `Route ${request.route_id} is not an active route of this account.`, 'route_invalid');
  }
  const { country, problem: invalid } = checkNumber(request.to);
  const refuse = (error: ApiError) => Object.assign(error, { country });
  if (invalid) throw refuse(invalidRequest('to', invalid, 'number_invalid'));
  let window: AppliedWindow | null = null;
  if (asked) ({ sendAt, applied: window } = scheduleWithin(request.to, asked, sendAt, now, refuse));
  const ofRecipient = recipientRefusal(request.to, checks, item.optOutConfirmation);
  if (ofRecipient) throw refuse(ofRecipient);
  const [route] = routesFor(checks.routes, request.to, request.route_id);
  if (!route) throw refuse(invalidRequest('to', `No eligible route covers ${request.to}.`, 'route_invalid'));
  return { planned, country, route, cost: multiply(route.price_per_segment, planned.plan.segments), sendAt, window };
}

/** The send time a window gives: the asked one (or none, for at once) when the window is open then, else its next opening. */
function scheduleWithin(to: string, window: SendWindow, sendAt: Date | null, now: Date, refuse: (error: ApiError) => ApiError) {
  try {
    const within = sendTimeInWindow(to, window, sendAt ?? now);
    return { sendAt: within.applied.delayed ? within.sendAt : sendAt, applied: within.applied };
  } catch (error) {
    throw error instanceof ApiError ? refuse(error) : error;
  }
}

/** An item refused by a check of its own, with its body's plan and its number's country when they were read. */
export interface Refused {
  index: number;
  refusal: ApiError;
  planned?: BodyToSend;
  country: string | null;
}

/**
 * The checks of a batch's items that concern each item alone, with one read of each account's
 * checks (its routes, approved senders, blocklisted and opted-out numbers), accounts in
 * ascending order: the opt-out locks that read takes are held to the commit. Acceptance charges
 * what passes; a preview only prices it.
 */
export async function checkBatch(trx: Knex.Transaction, items: SendItem[], now: Date): Promise<{ checked: Checked[]; refused: Refused[] }> {
  const checked: Checked[] = [];
  const refused: Refused[] = [];
  const plans: PlannedBodies = new Map();
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
        checked.push({ index, item, ...checkItem(item, checks, plans, now), id: newId('msg') });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        refused.push({
          index,
          refusal: error,
          planned: plans.get(bodyKey(item, checks)),
          country: (error as ApiError & { country?: string | null }).country ?? null,
        });
      }
    }
  }
  return { checked, refused };
}
