import type { Knex } from 'knex';
import { isUniqueViolation } from '../db/constraints.ts';
import { insertOperator, lockOperator, OPERATOR_ROLES, revokeOperatorRow, type OperatorRole, type OperatorRow } from '../db/operators.ts';
import { generateOperatorToken, hashSecret } from './api-key-secret.ts';
import { auditedWrite, recordAdminAction, ROOT_OPERATOR, type Operator } from './audit.ts';
import { conflict, invalidRequest, notFound } from './errors.ts';
import { newId } from './ids.ts';

export const roleAllows = (held: OperatorRole, required: OperatorRole): boolean => OPERATOR_ROLES.indexOf(held) >= OPERATOR_ROLES.indexOf(required);

export const operatorOf = (row: OperatorRow): Operator => ({ id: row.id, name: row.name, role: row.role });

/** What the audit log keeps of an operator: never its token or the token's hash. */
const audited = (row: OperatorRow) => ({ id: row.id, name: row.name, role: row.role, revoked_at: row.revoked_at?.toISOString() ?? null });

/** Creates a named operator; answers its row and its token, which is shown once and stored only as a hash. */
export async function createOperator(db: Knex, by: Operator, request: { name: string; role: OperatorRole }): Promise<{ row: OperatorRow; token: string }> {
  // Audit entries name root by this name: an operator of the same name would read as root.
  if (request.name.toLowerCase() === ROOT_OPERATOR.name) throw invalidRequest('name', `'${ROOT_OPERATOR.name}' is the name of ADMIN_TOKEN's entries.`);
  const token = generateOperatorToken();
  try {
    const row = await auditedWrite(db, by, async (trx) => {
      const created = await insertOperator(trx, { id: newId('opr'), name: request.name, role: request.role, token_hash: hashSecret(token) });
      return { result: created, entry: { action: 'operator.create', target_type: 'operator', target_id: created.id, before: null, after: audited(created) } };
    });
    return { row, token };
  } catch (error) {
    if (isUniqueViolation(error, 'operators_live_name_key')) throw conflict(`A live operator named '${request.name}' already exists.`, 'conflict', 'name');
    throw error;
  }
}

/** Revokes an operator: its token answers 401 from the next request on. A repeat answers the revoked operator and records nothing. */
export async function revokeOperator(db: Knex, by: Operator, id: string): Promise<OperatorRow> {
  return db.transaction(async (trx) => {
    const before = await lockOperator(trx, id);
    if (!before) throw notFound('operator', id);
    if (before.revoked_at !== null) return before;
    // Locked above and live: the guarded update cannot miss.
    const after = (await revokeOperatorRow(trx, id)) as OperatorRow;
    await recordAdminAction(trx, by, { action: 'operator.revoke', target_type: 'operator', target_id: id, before: audited(before), after: audited(after) });
    return after;
  });
}
