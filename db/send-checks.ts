import type { Knex } from 'knex';
import { blockedNumbers } from './blocklist.ts';
import { lockedOptOuts } from './opt-outs.ts';
import { approvedSenderTexts } from './senders.ts';

export interface SendChecks {
  /** The sender texts that are approved senders of the account. */
  approved: Set<string>;
  /** The recipients blocklisted for the account, globally or for it alone. */
  blocked: Set<string>;
  /** The recipients that opted out of the account's messages, their shared locks held to the commit. */
  optedOut: Set<string>;
}

/**
 * What the checks of sends from one account read, in one statement: each read alone was a round
 * trip of its own inside the accepting transaction, and under load a round trip costs more in
 * waiting than the read costs the server (`npm run bench`, target 2). Without `optOuts` no
 * opt-out is read or locked (the confirmation of an opt-out goes to a number that just opted out).
 */
export async function readSendChecks(trx: Knex.Transaction, accountId: string, from: string[], to: string[], optOuts = true): Promise<SendChecks> {
  const none = trx.raw('SELECT NULL::text WHERE false');
  const { rows } = await trx.raw('SELECT ARRAY(?) AS approved, ARRAY(?) AS blocked, ARRAY(?) AS opted_out', [
    approvedSenderTexts(trx, accountId, from),
    blockedNumbers(trx, accountId, to),
    optOuts && to.length > 0 ? lockedOptOuts(trx, accountId, to) : none,
  ]);
  const [row] = rows as { approved: string[]; blocked: string[]; opted_out: string[] }[];
  return { approved: new Set(row.approved), blocked: new Set(row.blocked), optedOut: new Set(row.opted_out) };
}
