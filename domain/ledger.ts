import type { Knex } from 'knex';
import { applyBalanceChanges, lockBalance, type LedgerChange, type LowBalance } from '../db/ledger.ts';
import type { JobQueue } from '../db/queues.ts';
import { recordSubjectEvents } from './events.ts';
import { add, compare, toAmount } from './money.ts';

/**
 * Emits balance.low, in the transaction that moved the balance below the account's threshold,
 * to the endpoints subscribed to it or to `*`. Costs nothing when nothing crossed.
 */
async function warnOfLowBalance(trx: Knex.Transaction, jobs: JobQueue, low: LowBalance | null): Promise<void> {
  if (low === null) return;
  await recordSubjectEvents(trx, jobs, [
    {
      accountId: low.accountId,
      type: 'balance.low',
      data: { account_id: low.accountId, balance: toAmount(low.balance), threshold: toAmount(low.threshold), currency: low.currency },
    },
  ]);
}

/**
 * Moves a balance that may fall (debits) through the ledger by all the changes or none: null, and
 * nothing changed, when the balance does not cover them all; warns the account when it falls
 * below its threshold.
 */
export async function moveBalance(
  trx: Knex.Transaction,
  jobs: JobQueue,
  accountId: string,
  changes: Omit<LedgerChange, 'accountId'>[],
): Promise<string | null> {
  const applied = await applyBalanceChanges(trx, accountId, changes);
  if (applied === null) return null;
  await warnOfLowBalance(trx, jobs, applied.lowBalance);
  return applied.balance;
}

/**
 * Applies charges in order against a balance locked for the transaction, each only while the
 * running balance covers it (a bulk send charges recipients in request order). Answers which
 * changes were applied; those are then moved as one (applyBalanceChanges), which the lock lets
 * cover them all.
 */
export async function applyWhileCovered(
  trx: Knex.Transaction,
  jobs: JobQueue,
  accountId: string,
  changes: Omit<LedgerChange, 'accountId'>[],
): Promise<boolean[]> {
  let running = await lockBalance(trx, accountId);
  const covered: Omit<LedgerChange, 'accountId'>[] = [];
  const applied = changes.map((change) => {
    if (compare(change.amount, '0') === 0) return true;
    const next = add(running, change.amount);
    if (compare(next, '0') < 0) return false;
    running = next;
    covered.push(change);
    return true;
  });
  if (covered.length === 0) return applied;
  const moved = await applyBalanceChanges(trx, accountId, covered);
  if (moved === null) throw new Error(`the locked balance of ${accountId} no longer covers the charges it covered`);
  await warnOfLowBalance(trx, jobs, moved.lowBalance);
  return applied;
}
