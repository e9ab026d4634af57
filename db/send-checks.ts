import type { Knex } from 'knex';
import { runPrepared } from './statements.ts';
import { routeColumns, type RouteRow } from './routes.ts';

export interface SendChecks {
  /** The account's active routes, in the order they are tried (ascending priority). */
  routes: RouteRow[];
  /** The sender texts that are approved senders of the account. */
  approved: Set<string>;
  /** The recipients blocklisted for the account, globally or for it alone. */
  blocked: Set<string>;
  /** The recipients that opted out of the account's messages, their shared locks held to the commit. */
  optedOut: Set<string>;
  /** The account's smart_encoding: whether its sends that do not say replace GSM-7 look-alikes. */
  smartEncoding: boolean;
  /** The account's default send window; null: any hour. */
  sendWindow: { start: string; end: string; time_zone: string | null } | null;
}

// One row per active route (one with no route when the account has none), each carrying the checks.
const READ_SEND_CHECKS = `
  SELECT checks.approved, checks.blocked, checks.opted_out, checks.smart_encoding, checks.send_window, ${routeColumns}
  FROM (SELECT (SELECT smart_encoding FROM accounts WHERE id = $1) AS smart_encoding,
               (SELECT send_window FROM accounts WHERE id = $1) AS send_window,
               ARRAY(SELECT sender_id FROM senders WHERE account_id = $1 AND status = 'approved' AND sender_id = ANY($2::text[])) AS approved,
               ARRAY(SELECT DISTINCT number FROM blocklist_entries WHERE number = ANY($3::text[]) AND (account_id IS NULL OR account_id = $1)) AS blocked,
               ARRAY(SELECT lock_and_find_opt_outs($1, $4::text[])) AS opted_out) AS checks
  LEFT JOIN (routes r JOIN account_routes ar ON ar.route_id = r.id AND ar.account_id = $1 AND r.is_active) ON true
  ORDER BY ar.priority`;

/**
 * What the checks of sends from one account read, in one prepared statement: the account's
 * routes, its approved senders, the recipients blocklisted or opted out, and its smart encoding
 * and send window settings (read in the sending transaction rather than from the authenticated row, which a
 * process may have cached from before a change). Each read alone was a round trip of its own
 * inside the accepting transaction, and under load a round trip costs more in waiting than the
 * read costs the server. The opt-outs are
 * read by lock_and_find_opt_outs (in the migrations), which takes the numbers' shared locks until
 * the transaction ends before it looks them up, so that an opt-out waits for this send and this
 * send sees an opt-out that committed first. Without `optOuts` no opt-out is read or locked (the
 * confirmation of an opt-out goes to a number that just opted out).
 */
export async function readSendChecks(trx: Knex.Transaction, accountId: string, from: string[], to: string[], optOuts = true): Promise<SendChecks> {
  const numbers = [...new Set(to)];
  const rows = await runPrepared<
    RouteRow & { approved: string[]; blocked: string[]; opted_out: string[]; smart_encoding: boolean; send_window: SendChecks['sendWindow'] }
  >(trx, {
    name: 'read-send-checks',
    text: READ_SEND_CHECKS,
    values: [accountId, [...new Set(from)], numbers, optOuts ? numbers : []],
  });
  const [{ approved, blocked, opted_out: optedOut, smart_encoding: smartEncoding, send_window: sendWindow }] = rows;
  const routes = rows
    .filter((row) => row.id !== null)
    .map(({ approved: _a, blocked: _b, opted_out: _o, smart_encoding: _s, send_window: _w, ...route }) => route);
  return { routes, approved: new Set(approved), blocked: new Set(blocked), optedOut: new Set(optedOut), smartEncoding: smartEncoding === true, sendWindow };
}
