// dispatch audit (admin API): what operators did through the admin API.
import { Command } from 'commander';
import type { AdminPage, AuditLogEntry } from '../admin-client.ts';
import { adminOptions, pageFlags, pageQuery, run, type PageOptions } from '../context.ts';
import { pageTable } from '../output.ts';

const showAuditPage = (page: AdminPage<AuditLogEntry>) =>
  pageTable(page, ['entry', 'entries'], ['When', 'Operator', 'Action', 'Target type', 'Target', 'Reason'], (entry) => [
    entry.created_at,
    entry.operator.name,
    entry.action,
    entry.target_type,
    entry.target_id,
    entry.reason,
  ]);

export function auditCommand(): Command {
  return adminOptions(
    pageFlags(
      new Command('audit')
        .description('List the admin audit log, newest first: every admin write with the target before and after (admin; --json prints {data, pagination})')
        .option('--action <action>', 'only this action, e.g. account.suspend')
        .option('--target-type <type>', 'only targets of this type, e.g. account, route, sender')
        .option('--target <id>', 'only entries about this target id')
        .option('--operator <id>', 'only entries by this operator (opr_...), or root for ADMIN_TOKEN')
        .option('--account <id>', 'only entries about this account (acct_...), notes included'),
      'entries',
    ),
  ).action((options: PageOptions & { action?: string; targetType?: string; target?: string; operator?: string; account?: string }, command: Command) =>
    run(command, async ({ admin, out }) => {
      const page = await (
        await admin()
      ).listAuditLog({
        ...pageQuery(options),
        ...(options.action !== undefined && { action: options.action }),
        ...(options.targetType !== undefined && { target_type: options.targetType }),
        ...(options.target !== undefined && { target_id: options.target }),
        ...(options.operator !== undefined && { operator_id: options.operator }),
        ...(options.account !== undefined && { account_id: options.account }),
      });
      out.result(page, () => showAuditPage(page));
    }),
  );
}
