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

type Sending = Pick<MessageRow, 'account_id' | 'from' | 'to'>;

/**
 * Why each scheduled message may no longer go, as its error (undefined: it may), in their order:
 * one read of the checks for each account's messages, in one transaction, so that the many
 * messages due in one instant cost a few reads rather than one each.
 */
export async function refusalsAtSending(db: Knex, messages: Sending[]): Promise<(NonNullable<MessageRow['error']> | undefined)[]> {
  const byAccount = Map.groupBy(messages, (message) => message.account_id);
  const checks = await db.transaction(async (trx) => {
    const read = new Map<string, SendChecks>();
    for (const [accountId, sent] of byAccount)
      read.set(
        accountId,
        await readSendChecks(
          trx,
          accountId,
          sent.map((message) => message.from),
          sent.map((message) => message.to),
        ),
      );
    return read;
  });
  return messages.map(({ account_id: accountId, from, to }) => {
    const standing = checks.get(accountId) as SendChecks;
    const refusal = senderRefusal(from, standing) ?? recipientRefusal(to, standing);
    return refusal && { type: 'invalid_request_error', code: refusal.code, message: `Not sent at its send time: ${refusal.message}` };
  });
}
