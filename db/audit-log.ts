import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export interface AuditRow {
  id: string;
  action: string;
  target_type: string;
  target_id: string;
  before: unknown;
  after: unknown;
  reason: string | null;
  /** null for root (ADMIN_TOKEN). */
  operator_id: string | null;
  operator_name: string;
  created_at: Date;
}

export type NewAuditRow = Omit<AuditRow, 'created_at'>;

export interface AuditFilter {
  action?: string;
  targetType?: string;
  targetId?: string;
  /** An operator's id, or null for the entries root made. */
  operatorId?: string | null;
  /** Entries whose target is this account. */
  accountId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

export async function insertAuditRow(db: Knex, row: NewAuditRow): Promise<AuditRow> {
  // jsonb columns take JSON text: pg would send a JS array as a Postgres array.
  const [inserted] = await db<AuditRow>('admin_audit_log')
    .insert({ ...row, before: toJson(row.before), after: toJson(row.after) })
    .returning('*');
  return inserted;
}

const toJson = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

export async function listAuditRows(db: Knex, filter: AuditFilter, page: PageRequest): Promise<Page<AuditRow>> {
  const query = db<AuditRow>('admin_audit_log');
  if (filter.action !== undefined) query.where({ action: filter.action });
  if (filter.targetType !== undefined) query.where({ target_type: filter.targetType });
  if (filter.targetId !== undefined) query.where({ target_id: filter.targetId });
  if (filter.operatorId === null) query.whereNull('operator_id');
  else if (filter.operatorId !== undefined) query.where({ operator_id: filter.operatorId });
  if (filter.accountId !== undefined) query.where({ target_type: 'account', target_id: filter.accountId });
  if (filter.createdAfter !== undefined) query.where('created_at', '>', filter.createdAfter);
  if (filter.createdBefore !== undefined) query.where('created_at', '<', filter.createdBefore);
  return fetchPage<AuditRow>(db, query, page);
}
