import pg from 'pg';

/**
 * What the chaos tests read straight from the database, around the API, so that a property is
 * checked where it is stored and not through the code under test.
 */

export const FINAL_STATES = ['delivered', 'undelivered', 'failed'];

export interface MessageState {
  id: string;
  status: string;
  route_id: number | null;
  error: { code: string; message: string } | null;
}

/** A pool that survives its server going away: a dropped idle connection is not an uncaught error. */
export function inspectionPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {});
  return pool;
}

export async function messagesOf(pool: pg.Pool, accountId: string): Promise<MessageState[]> {
  const { rows } = await pool.query('SELECT id, status, route_id, error FROM messages WHERE account_id = $1', [accountId]);
  return rows;
}

/** `{ delivered: 3, pending: 1 }`, for failure messages. */
export function countBy<T>(items: T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

/** Pending messages of the account that no live send job (created, retry or active) will move: stranded. */
export async function strandedMessages(pool: pg.Pool, accountId: string): Promise<string[]> {
  const { rows } = await pool.query(
    `SELECT m.id FROM messages m
     WHERE m.account_id = $1 AND m.status = 'pending'
       AND NOT EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = 'send-message' AND j.state IN ('created', 'retry', 'active') AND j.data->'message_ids' @> to_jsonb(m.id))`,
    [accountId],
  );
  return rows.map((row) => row.id);
}

export async function eventIdsOf(pool: pg.Pool, accountId: string): Promise<{ id: string; type: string }[]> {
  const { rows } = await pool.query('SELECT id, type FROM events WHERE account_id = $1', [accountId]);
  return rows;
}

export interface Money {
  balance: string;
  ledger: string;
  /** The balance the rules say the account should have: its credits less what every message not refunded cost. */
  expected: string;
}

/**
 * The account's money three ways, computed in numeric by the database: the balance, the sum of
 * its ledger, and its credits less `pricePerMessage` for every message that was not refunded
 * (by the contract, a failed message is refunded; sent, delivered and undelivered ones are paid).
 */
export async function moneyOf(pool: pg.Pool, accountId: string, pricePerMessage: number): Promise<Money> {
  const { rows } = await pool.query(
    `SELECT a.balance::text AS balance,
            (SELECT coalesce(sum(amount), 0) FROM ledger_entries l WHERE l.account_id = a.id)::numeric(18, 4)::text AS ledger,
            ((SELECT coalesce(sum(amount), 0) FROM ledger_entries l WHERE l.account_id = a.id AND l.kind = 'credit')
              - $2::numeric * (SELECT count(*) FROM messages m WHERE m.account_id = a.id AND m.status <> 'failed'))::numeric(18, 4)::text AS expected
     FROM accounts a WHERE a.id = $1`,
    [accountId, pricePerMessage],
  );
  return rows[0];
}
