import type { Knex } from 'knex';
import { insertAuditRow, listAuditRows, type AuditFilter, type AuditRow } from '../db/audit-log.ts';
import type { Page, PageRequest } from '../db/pagination.ts';
import type { OperatorRole } from '../db/operators.ts';
import { getAccount } from './accounts.ts';
import { invalidRequest } from './errors.ts';
import { newId } from './ids.ts';

/** Who calls the admin API: a named operator, or root (ADMIN_TOKEN), which has no id and every role. */
export interface Operator {
  id: string | null;
  name: string;
  role: OperatorRole;
}

export const ROOT_OPERATOR: Operator = { id: null, name: 'root', role: 'admin' };

/** What an operator did, to what, and the target before and after (as the admin API shows it: never a secret). */
export interface AdminAction {
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  reason?: string | null;
}

/** Records an admin write and who made it; call it in the write's own transaction, so that both commit or neither. */
export async function recordAdminAction(trx: Knex.Transaction, operator: Operator, entry: AdminAction): Promise<AuditRow> {
  return insertAuditRow(trx, { id: newId('aud'), ...entry, reason: entry.reason ?? null, operator_id: operator.id, operator_name: operator.name });
}

/** Runs an operator's admin write in one transaction with its audit row; answers what the write answered. */
export async function auditedWrite<T>(db: Knex, operator: Operator, write: (trx: Knex.Transaction) => Promise<{ result: T; entry: AdminAction }>): Promise<T> {
  return db.transaction(async (trx) => {
    const { result, entry } = await write(trx);
    await recordAdminAction(trx, operator, entry);
    return result;
  });
}

/** A note about an account, kept as an audit entry of its own so that the account's history reads in one list. */
export async function noteAccount(db: Knex, operator: Operator, accountId: string, text: string): Promise<AuditRow> {
  return db.transaction(async (trx) => {
    const account = await getAccount(trx, accountId);
    return recordAdminAction(trx, operator, { action: 'account.note', target_type: 'account', target_id: account.id, before: null, after: null, reason: text });
  });
}

export async function listAdminActions(db: Knex, filter: AuditFilter, page: PageRequest): Promise<Page<AuditRow>> {
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter >= filter.createdBefore) {
    throw invalidRequest('created_before', 'created_before must be later than created_after.');
  }
  return listAuditRows(db, filter, page);
}
