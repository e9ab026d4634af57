import { listAccounts } from '../../db/accounts.ts';
import { createApiKey } from '../../domain/api-keys.ts';
import { changeAccountStatus, creditAccount, getAccount, getAccountForUpdate, openAccount, type AccountDecision } from '../../domain/accounts.ts';
import { auditedWrite, noteAccount } from '../../domain/audit.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { toAccount, toApiKey, toApiKeyWithSecret, toAuditLogEntry, toBalance, toPagination } from '../representations.ts';
import type { AdminCaller, AdminHandler, Context } from '../types.ts';

export const adminCreateAccount: AdminHandler<'adminCreateAccount'> = async ({ body }, { services, caller }) => {
  const account = await auditedWrite(services.db, caller.operator, async (trx) => {
    const opened = await openAccount(trx, body);
    return { result: opened, entry: { action: 'account.create', target_type: 'account', target_id: opened.id, before: null, after: toAccount(opened) } };
  });
  return { status: 201, data: toAccount(account) };
};

export const adminGetAccount: AdminHandler<'adminGetAccount'> = async ({ params }, { services }) => ({
  status: 200,
  data: toAccount(await getAccount(services.db, params.id)),
});

export const adminListAccounts: AdminHandler<'adminListAccounts'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listAccounts(services.db, { q: query.q, email: query.email, status: query.status }, { page, limit });
  return { status: 200, data: rows.map(toAccount), pagination: toPagination(page, limit, total) };
};

export const adminCreditAccount: AdminHandler<'adminCreditAccount'> = async ({ params, body }, { services, caller }) => {
  const account = await auditedWrite(services.db, caller.operator, async (trx) => {
    const before = await getAccountForUpdate(trx, params.id);
    const after = await creditAccount(trx, params.id, body.amount, body.description);
    const entry = {
      action: 'account.credit',
      target_type: 'account',
      target_id: after.id,
      before: toAccount(before),
      after: toAccount(after),
      reason: body.description,
    };
    return { result: after, entry };
  });
  return { status: 200, data: toBalance(account) };
};

export const adminCreateApiKey: AdminHandler<'adminCreateApiKey'> = async ({ params, body }, { services, caller }) => {
  const { row, plainKey } = await auditedWrite(services.db, caller.operator, async (trx) => {
    const account = await getAccount(trx, params.id);
    const created = await createApiKey(trx, account.id, body, [...SCOPES], null);
    // The key as its list shows it: the secret is shown once, to the caller, and stored nowhere.
    return {
      result: created,
      entry: { action: 'api_key.create', target_type: 'api_key', target_id: created.row.id, before: null, after: toApiKey(created.row) },
    };
  });
  return { status: 201, data: toApiKeyWithSecret(row, plainKey) };
};

async function moveAccount({ services, caller }: Context<AdminCaller>, id: string, decision: AccountDecision, reason: string) {
  const account = await auditedWrite(services.db, caller.operator, async (trx) => {
    const { before, after } = await changeAccountStatus(trx, id, decision, reason);
    return {
      result: after,
      entry: { action: `account.${decision}`, target_type: 'account', target_id: id, before: toAccount(before), after: toAccount(after), reason },
    };
  });
  return { status: 200 as const, data: toAccount(account) };
}

export const adminSuspendAccount: AdminHandler<'adminSuspendAccount'> = ({ params, body }, context) => moveAccount(context, params.id, 'suspend', body.reason);

export const adminCloseAccount: AdminHandler<'adminCloseAccount'> = ({ params, body }, context) => moveAccount(context, params.id, 'close', body.reason);

export const adminReactivateAccount: AdminHandler<'adminReactivateAccount'> = ({ params, body }, context) =>
  moveAccount(context, params.id, 'reactivate', body.reason);

export const adminCreateAccountNote: AdminHandler<'adminCreateAccountNote'> = async ({ params, body }, { services, caller }) => ({
  status: 201,
  data: toAuditLogEntry(await noteAccount(services.db, caller.operator, params.id, body.text)),
});
