// dispatch operators create|list|revoke|current (admin API): named operators of the admin API,
// each with a role and a token of its own.
import { Command, Option } from 'commander';
import type { AdminPage, CurrentOperator, Operator, OperatorRole, OperatorWithToken } from '../admin-client.ts';
import { adminOptions, positiveInteger, run } from '../context.ts';
import { fields, pageTable } from '../output.ts';

const ROLES: OperatorRole[] = ['viewer', 'support', 'admin'];

const showOperator = (operator: Operator | OperatorWithToken) =>
  fields([
    ['ID', operator.id],
    ['Name', operator.name],
    ['Role', operator.role],
    ...('token' in operator ? ([['Token', operator.token]] as [string, unknown][]) : []),
    ['Created', operator.created_at],
    ['Revoked', operator.revoked_at],
    ['Last used', operator.last_used_at],
  ]);

const showCurrent = (operator: CurrentOperator) =>
  fields([
    ['ID', operator.id],
    ['Name', operator.name],
    ['Role', operator.role],
  ]);

const showOperatorPage = (page: AdminPage<Operator>) =>
  pageTable(page, ['operator', 'operators'], ['ID', 'Name', 'Role', 'Revoked', 'Last used', 'Created'], (operator) => [
    operator.id,
    operator.name,
    operator.role,
    operator.revoked_at,
    operator.last_used_at,
    operator.created_at,
  ]);

export function operatorsCommand(): Command {
  const operators = new Command('operators').description('Create, list and revoke named operators of the admin API, each with a role (admin)');

  adminOptions(
    operators
      .command('create')
      .description('Create an operator; its token is shown this once (viewer reads, support also adds notes, admin does everything)')
      .requiredOption('--name <name>', 'who the operator is, as the audit log names them')
      .addOption(new Option('--role <role>', 'what the operator may do').choices(ROLES).makeOptionMandatory()),
  ).action((options: { name: string; role: OperatorRole }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const operator = await (await admin()).createOperator({ name: options.name, role: options.role });
      out.result(operator, () => showOperator(operator));
    }),
  );

  adminOptions(
    operators
      .command('list')
      .description('List operators, revoked ones included, newest first (--json prints {data, pagination})')
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'operators per page, 1 to 100 (default 50)', positiveInteger),
  ).action((options: { page?: number; limit?: number }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const page = await (await admin()).listOperators({ page: options.page, limit: options.limit });
      out.result(page, () => showOperatorPage(page));
    }),
  );

  adminOptions(operators.command('revoke').description('Revoke an operator: its token answers 401 from now on').argument('<operator-id>', 'opr_...')).action(
    (id: string, _options: object, command: Command) =>
      run(command, async ({ admin, out }) => {
        const operator = await (await admin()).revokeOperator(id);
        out.result(operator, () => showOperator(operator));
      }),
  );

  adminOptions(operators.command('current').description('Show who the admin token belongs to and its role (root for ADMIN_TOKEN)')).action(
    (_options: object, command: Command) =>
      run(command, async ({ admin, out }) => {
        const operator = await (await admin()).currentOperator();
        out.result(operator, () => showCurrent(operator));
      }),
  );

  return operators;
}
