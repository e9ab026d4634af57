import type { Knex } from 'knex';
import { findAccount } from '../db/accounts.ts';
import { deleteBlocklistEntry, insertBlocklistEntry, type BlocklistRow } from '../db/blocklist.ts';
import { isUniqueViolation } from '../db/constraints.ts';
import { conflict, notFound } from './errors.ts';
import { newId } from './ids.ts';

export async function blockNumber(db: Knex, request: { number: string; account_id?: string; reason?: string | null }): Promise<BlocklistRow> {
  const accountId = request.account_id ?? null;
  if (accountId !== null && !(await findAccount(db, accountId))) throw notFound('account', accountId);
  try {
    return await insertBlocklistEntry(db, { id: newId('blk'), number: request.number, account_id: accountId, reason: request.reason ?? null });
  } catch (error) {
    if (isUniqueViolation(error))
      throw conflict(`${request.number} is already blocklisted ${accountId ? 'for this account' : 'for every account'}.`, 'conflict', 'number');
    throw error;
  }
}

export async function unblockNumber(db: Knex, number: string, accountId: string | undefined): Promise<BlocklistRow> {
  const entry = await deleteBlocklistEntry(db, number, accountId ?? null);
  if (!entry) throw notFound('blocklist entry', number);
  return entry;
}
