import type { Knex } from 'knex';
import { lockBalance, writeLedgerRows, type LedgerChange, type LedgerRow } from '../db/ledger.ts';
import { add, compare } from './money.ts';

/**
 * Applies charges in order against a balance locked for the transaction, each only while the
 * running balance covers it (a bulk send charges recipients in request order). Answers which
 * changes were applied; the ledger and the balance are written in one statement each.
 */
export async function applyWhileCovered(trx: Knex, accountId: string, changes: Omit<LedgerChange, 'accountId'>[]): Promise<boolean[]> {
  let running = await lockBalance(trx, accountId);
  const rows: LedgerRow[] = [];
  const applied = changes.map((change) => {
    if (compare(change.amount, '0') === 0) return true;
    const next = add(running, change.amount);
    if (compare(next, '0') < 0) return false;
    running = next;
    rows.push({ account_id: accountId, kind: change.kind, amount: change.amount, balance_after: running, description: change.description ?? null, message_id: change.messageId ?? null });
    return true;
  });
  await writeLedgerRows(trx, accountId, rows);
  return applied;
}
