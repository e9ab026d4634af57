import type { OperatorRole } from './session';

/** Each role may do what the roles below it may: admin > support > viewer. */
const RANK: Record<OperatorRole, number> = { viewer: 0, support: 1, admin: 2 };

/** Whether `role` may call an operation whose `x-required-role` in openapi.yaml is `required`. */
export function can(role: OperatorRole, required: OperatorRole): boolean {
  return RANK[role] >= RANK[required];
}
