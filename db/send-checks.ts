import type { Knex } from 'knex';
import { runPrepared } from './batching.ts';

export interface SendChecks {
  /** The sender texts that are approved senders of the account. */
  approved: Set<string>;
  /** The recipients blocklisted for the account, globally or for it alone. */
  blocked: Set<string>;
  /** The recipients that opted out of the account's messages, their shared locks held to the commit. */
  optedOut: Set<string>;
}

const READ_SEND_CHECKS = `
  SELECT ARRAY(SELECT sender_id FROM senders WHERE account_id = $1 AND status = 'approved' AND sender_id = ANY($2::text[])) AS approved,
         ARRAY(SELECT DISTINCT number FROM blocklist_entries WHERE number = ANY($3::text[]) AND (account_id IS NULL OR account_id = $1)) AS blocked,
         ARRAY(SELECT lock_and_find_opt_outs($1, $4::text[])) AS opted_out`;

/**
 * What the checks of sends from one account read, in one prepared statement: each read alone was
 * a round trip of its own inside the accepting transaction, and under load a round trip costs
 * more in waiting than the read costs the server (`npm run bench`, target 2). The opt-outs are
 * read by lock_and_find_opt_outs (in the migrations), which takes the numbers' shared locks until
 * the transaction ends before it looks them up, so that an opt-out waits for this send and this
 * send sees an opt-out that committed first. Without `optOuts` no opt-out is read or locked (the
 * confirmation of an opt-out goes to a number that just opted out).
 */
export async function readSendChecks(trx: Knex.Transaction, accountId: string, from: string[], to: string[], optOuts = true): Promise<SendChecks> {
  const numbers = [...new Set(to)];
  const [row] = await runPrepared<{ approved: string[]; blocked: string[]; opted_out: string[] }>(trx, {
    name: 'read-send-checks',
    text: READ_SEND_CHECKS,
    values: [accountId, [...new Set(from)], numbers, optOuts ? numbers : []],
  });
  return { approved: new Set(row.approved), blocked: new Set(row.blocked), optedOut: new Set(row.opted_out) };
}
