import { listOperators } from '../../db/operators.ts';
import { createOperator, revokeOperator } from '../../domain/operators.ts';
import { toOperator, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminCreateOperator: AdminHandler<'adminCreateOperator'> = async ({ body }, { services, caller }) => {
  const { row, token } = await createOperator(services.db, caller.operator, body);
  return { status: 201, data: { ...toOperator(row), token } };
};

export const adminListOperators: AdminHandler<'adminListOperators'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listOperators(services.db, { page, limit });
  return { status: 200, data: rows.map(toOperator), pagination: toPagination(page, limit, total) };
};

export const adminRevokeOperator: AdminHandler<'adminRevokeOperator'> = async ({ params }, { services, caller }) => ({
  status: 200,
  data: toOperator(await revokeOperator(services.db, caller.operator, params.id)),
});

// Authentication found the caller: nothing is left to read.
export const adminGetCurrentOperator: AdminHandler<'adminGetCurrentOperator'> = (_request, { caller }) =>
  Promise.resolve({ status: 200, data: { object: 'current_operator', ...caller.operator } });
