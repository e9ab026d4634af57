import type { Knex } from 'knex';
import { runPrepared } from './statements.ts';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export type LedgerKind = 'credit' | 'debit' | 'refund' | 'adjustment';

export interface LedgerChange {
  accountId: string;
  kind: LedgerKind;
  /** Signed decimal string: positive credits, negative debits. */
  amount: string;
  description?: string | null;
  messageId?: string | null;
}

/** The balance went from at or above the account's low-balance threshold to below it: the account is to be warned (balance.low). */
export interface LowBalance {
  accountId: string;
  balance: string;
  threshold: string;
  currency: string;
}

export interface BalanceAfter {
  balance: string;
  lowBalance: LowBalance | null;
}

/**
 * The warning's one check, in the statement that moves the balance (the row is locked there):
 * a null threshold makes it null, so an account without one pays no extra statement. Checking
 * the crossing, not the level, warns once per fall: further debits below do not warn again, and
 * a credit back above re-arms it.
 */
const crossedThreshold = (before: string) =>
  `CASE WHEN balance < low_balance_threshold AND ${before} >= low_balance_threshold THEN low_balance_threshold END AS crossed_threshold`;

const lowBalanceOf = (accountId: string, row: { balance: string; currency: string; crossed_threshold: string | null }): LowBalance | null =>
  row.crossed_threshold === null ? null : { accountId, balance: row.balance, threshold: row.crossed_threshold, currency: row.currency };

const APPLY_BALANCE_CHANGES = `
  WITH changes AS (SELECT * FROM json_to_recordset($1::json) AS c (position integer, kind text, amount numeric, description text, message_id text)),
  total AS (SELECT sum(amount) AS amount FROM changes),
  moved AS (
    UPDATE accounts SET balance = balance + total.amount FROM total
    WHERE id = $2 AND balance + total.amount >= 0
    RETURNING balance, currency, total.amount AS total, ${crossedThreshold('balance - total.amount')}
  ),
  written AS (
    INSERT INTO ledger_entries (account_id, kind, amount, balance_after, description, message_id)
    SELECT $2, c.kind, c.amount, moved.balance - moved.total + sum(c.amount) OVER (ORDER BY c.position), c.description, c.message_id
    FROM changes c CROSS JOIN moved ORDER BY c.position
  )
  SELECT balance, currency, crossed_threshold FROM moved`;

/**
 * Moves a balance by the sum of the changes and writes their ledger rows (each with the balance
 * after it, in the order given), in one statement; must run inside a transaction. The guarded
 * update makes an overdraft impossible under any concurrency: it answers null, and changes
 * nothing, when the new balance would be negative.
 */
export async function applyBalanceChanges(trx: Knex, accountId: string, changes: Omit<LedgerChange, 'accountId'>[]): Promise<BalanceAfter | null> {
  const given = changes.map((change, position) => ({
    position,
    kind: change.kind,
    amount: change.amount,
    description: change.description ?? null,
    message_id: change.messageId ?? null,
  }));
  const rows = await runPrepared<{ balance: string; currency: string; crossed_threshold: string | null }>(trx, {
    name: 'apply-balance-changes',
    text: APPLY_BALANCE_CHANGES,
    values: [JSON.stringify(given), accountId],
  });
  const row = rows[0];
  if (row === undefined) return null;
  return { balance: row.balance, lowBalance: lowBalanceOf(accountId, row) };
}

export const applyBalanceChange = (trx: Knex, change: LedgerChange): Promise<BalanceAfter | null> => applyBalanceChanges(trx, change.accountId, [change]);

/** The sum of an account's ledger: equals its balance (tests and audits check it). */
export async function ledgerSum(db: Knex, accountId: string): Promise<string> {
  const [{ sum }] = await db('ledger_entries').where({ account_id: accountId }).sum<{ sum: string | null }[]>({ sum: 'amount' });
  return sum ?? '0';
}

/**
 * Locks the account's row for the rest of the transaction and answers its balance. FOR NO KEY
 * UPDATE, as an UPDATE of the balance takes: FOR UPDATE would also wait for the key-share locks
 * that inserting rows which reference the account takes (their foreign keys), so two transactions
 * that had each inserted messages deadlocked here (seen under `npm run bench`'s concurrent sends,
 * before migration 20261126020000 dropped the messages' key).
 */
export async function lockBalance(trx: Knex, accountId: string): Promise<string> {
  const row = await trx('accounts').where({ id: accountId }).forNoKeyUpdate().first<{ balance: string }>('balance');
  return row.balance;
}

export interface LedgerRow {
  account_id: string;
  kind: LedgerKind;
  amount: string;
  balance_after: string;
  description: string | null;
  message_id: string | null;
}

export interface LedgerEntryRow extends LedgerRow {
  id: number;
  created_at: Date;
}

export interface LedgerFilter {
  kind?: LedgerKind;
  messageId?: string;
  createdAfter?: string;
  createdBefore?: string;
}

/** A page of an account's ledger, newest first; filters combine with AND, the time bounds exclusive. */
export async function listLedger(db: Knex, accountId: string, filter: LedgerFilter, page: PageRequest): Promise<Page<LedgerEntryRow>> {
  const query = db<LedgerEntryRow>('ledger_entries').where({ account_id: accountId });
  if (filter.kind) query.andWhere({ kind: filter.kind });
  if (filter.messageId) query.andWhere({ message_id: filter.messageId });
  if (filter.createdAfter) query.andWhere('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) query.andWhere('created_at', '<', filter.createdBefore);
  return fetchPage<LedgerEntryRow>(db, query, page);
}

/** What the ledger gave back for a message: the sum of its refunds. */
export async function refundedFor(db: Knex, messageId: string): Promise<string> {
  const row = await db('ledger_entries')
    .where({ message_id: messageId, kind: 'refund' })
    .first<{ total: string }>(db.raw('coalesce(sum(amount), 0)::numeric(14,4)::text AS total'));
  return row.total;
}
