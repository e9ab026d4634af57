import type { Knex } from 'knex';

export type LedgerKind = 'credit' | 'debit' | 'refund' | 'adjustment';

export interface LedgerChange {
  accountId: string;
  kind: LedgerKind;
  /** Signed decimal string: positive credits, negative debits. */
  amount: string;
  description?: string | null;
  messageId?: string | null;
}

/**
 * Moves a balance and writes its ledger row; must run inside a transaction. The guarded update
 * makes an overdraft impossible under any concurrency: it answers null, and changes nothing,
 * when the new balance would be negative.
 */
export async function applyBalanceChange(trx: Knex, change: LedgerChange): Promise<string | null> {
  const updated = await trx.raw(
    `UPDATE accounts SET balance = balance + :amount::numeric
     WHERE id = :accountId AND balance + :amount::numeric >= 0
     RETURNING balance`,
    { amount: change.amount, accountId: change.accountId },
  );
  const balance: string | undefined = updated.rows[0]?.balance;
  if (balance === undefined) return null;
  await trx('ledger_entries').insert({
    account_id: change.accountId,
    kind: change.kind,
    amount: change.amount,
    balance_after: balance,
    description: change.description ?? null,
    message_id: change.messageId ?? null,
  });
  return balance;
}

/** The sum of an account's ledger: equals its balance (tests and audits check it). */
export async function ledgerSum(db: Knex, accountId: string): Promise<string> {
  const [{ sum }] = await db('ledger_entries').where({ account_id: accountId }).sum<{ sum: string | null }[]>({ sum: 'amount' });
  return sum ?? '0';
}

/**
 * Locks the account's row for the rest of the transaction and answers its balance. FOR NO KEY
 * UPDATE, as an UPDATE of the balance takes: FOR UPDATE would also wait for the key-share locks
 * that inserting the account's messages takes (their foreign key), so two transactions that had
 * each inserted messages deadlocked here (seen under `npm run bench`'s concurrent sends).
 */
export async function lockBalance(trx: Knex, accountId: string): Promise<string> {
  const row = await trx('accounts').where({ id: accountId }).forNoKeyUpdate().first('balance');
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

/** Sets a locked balance and writes the ledger rows that lead to it, one statement each. */
export async function writeLedgerRows(trx: Knex, accountId: string, rows: LedgerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await trx('accounts').where({ id: accountId }).update({ balance: rows[rows.length - 1].balance_after });
  await trx('ledger_entries').insert(rows);
}
