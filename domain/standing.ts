import type { MessageRow } from '../db/messages.ts';
import { readSendChecks, type SendChecks } from '../db/send-checks.ts';
import type { Knex } from 'knex';
import { invalidRequest, type ApiError } from './errors.ts';

/**
 * The checks of a send whose answers can change after acceptance: the sender still approved,
 * the number neither blocklisted nor opted out. Acceptance asks them (domain/sending.ts), and a
 * scheduled message asks them again when it goes.
 */
export function senderRefusal(from: string, checks: SendChecks): ApiError | undefined {
  if (!checks.approved.has(from)) return invalidRequest('from', `'${from}' is not an approved sender of this account.`, 'sender_not_approved');
}

export function recipientRefusal(to: string, checks: SendChecks, optOutConfirmation = false): ApiError | undefined {
  if (checks.blocked.has(to)) return invalidRequest('to', `${to} is blocklisted.`, 'recipient_blocklisted');
  if (!optOutConfirmation && checks.optedOut.has(to)) return invalidRequest('to', `${to} opted out of this account's messages.`, 'recipient_opted_out');
}

/** Why a scheduled message may no longer go, as its error; undefined when it may. */
export async function refusalAtSending(
  db: Knex,
  message: Pick<MessageRow, 'account_id' | 'from' | 'to'>,
): Promise<NonNullable<MessageRow['error']> | undefined> {
  const checks = await db.transaction((trx) => readSendChecks(trx, message.account_id, [message.from], [message.to]));
  const refusal = senderRefusal(message.from, checks) ?? recipientRefusal(message.to, checks);
  if (refusal) return { type: 'invalid_request_error', code: refusal.code, message: `Not sent at its send time: ${refusal.message}` };
}
