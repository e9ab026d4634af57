import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

/** In rising order: each role may do what the ones before it may (domain/operators.ts roleAllows). */
export const OPERATOR_ROLES = ['viewer', 'support', 'admin'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

export interface OperatorRow {
  id: string;
  name: string;
  role: OperatorRole;
  token_hash: Buffer;
  created_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

export type NewOperator = Pick<OperatorRow, 'id' | 'name' | 'role' | 'token_hash'>;

export async function insertOperator(db: Knex, operator: NewOperator): Promise<OperatorRow> {
  const [row] = await db<OperatorRow>('operators').insert(operator).returning('*');
  return row;
}

/**
 * The live operator holding this token hash, marked used: one statement that finds and touches,
 * since the admin API is called seldom enough that a write per request costs nothing.
 */
export async function useOperatorToken(db: Knex, tokenHash: Buffer): Promise<OperatorRow | undefined> {
  const [row] = await db<OperatorRow>('operators')
    .where({ token_hash: tokenHash })
    .whereNull('revoked_at')
    .update({ last_used_at: db.fn.now() })
    .returning('*');
  return row;
}

export async function lockOperator(trx: Knex.Transaction, id: string): Promise<OperatorRow | undefined> {
  return trx<OperatorRow>('operators').where({ id }).forUpdate().first();
}

/** Revokes a live operator; answers the row as it now is, or undefined when it was already revoked. */
export async function revokeOperatorRow(db: Knex, id: string): Promise<OperatorRow | undefined> {
  const [row] = await db<OperatorRow>('operators').where({ id }).whereNull('revoked_at').update({ revoked_at: db.fn.now() }).returning('*');
  return row;
}

export type ListedOperator = Omit<OperatorRow, 'token_hash'>;

export async function listOperators(db: Knex, page: PageRequest): Promise<Page<ListedOperator>> {
  const query = db<OperatorRow>('operators').select('id', 'name', 'role', 'created_at', 'revoked_at', 'last_used_at');
  return fetchPage<ListedOperator>(db, query, page);
}
