import type { Knex } from 'knex';
import { insertAuditRow, listAuditRows, type AuditFilter, type AuditRow } from '../db/audit-log.ts';
import type { Page, PageRequest } from '../db/pagination.ts';
import { invalidRequest } from './errors.ts';
import { newId } from './ids.ts';

/** What an operator did, to what, and the target before and after (as the admin API shows it: never a secret). */
export interface AdminAction {
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  reason?: string | null;
}

/** Records an admin write; call it in the write's own transaction, so that both commit or neither. */
export async function recordAdminAction(trx: Knex.Transaction, entry: AdminAction): Promise<AuditRow> {
  return insertAuditRow(trx, { id: newId('aud'), ...entry, reason: entry.reason ?? null });
}

/** Runs an admin write in one transaction with its audit row; answers what the write answered. */
export async function auditedWrite<T>(db: Knex, write: (trx: Knex.Transaction) => Promise<{ result: T; entry: AdminAction }>): Promise<T> {
  return db.transaction(async (trx) => {
    const { result, entry } = await write(trx);
    await recordAdminAction(trx, entry);
    return result;
  });
}

export async function listAdminActions(db: Knex, filter: AuditFilter, page: PageRequest): Promise<Page<AuditRow>> {
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter >= filter.createdBefore) {
    throw invalidRequest('created_before', 'created_before must be later than created_after.');
  }
  return listAuditRows(db, filter, page);
}
