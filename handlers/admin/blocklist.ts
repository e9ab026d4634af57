import { listBlocklist } from '../../db/blocklist.ts';
import { auditedWrite } from '../../domain/audit.ts';
import { blockNumber, unblockNumber } from '../../domain/blocklist.ts';
import { deleted, toBlocklistEntry, toPagination } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminCreateBlocklistEntry: AdminHandler<'adminCreateBlocklistEntry'> = async ({ body }, { services, caller }) => {
  const entry = await auditedWrite(services.db, caller.operator, async (trx) => {
    const created = await blockNumber(trx, body);
    const action = {
      action: 'blocklist.create',
      target_type: 'blocklist_entry',
      target_id: created.id,
      before: null,
      after: toBlocklistEntry(created),
      reason: created.reason,
    };
    return { result: created, entry: action };
  });
  return { status: 201, data: toBlocklistEntry(entry) };
};

export const adminDeleteBlocklistEntry: AdminHandler<'adminDeleteBlocklistEntry'> = async ({ params, query }, { services, caller }) => {
  const removed = await auditedWrite(services.db, caller.operator, async (trx) => {
    const entry = await unblockNumber(trx, params.number, query.account_id);
    return {
      result: entry,
      entry: { action: 'blocklist.delete', target_type: 'blocklist_entry', target_id: entry.id, before: toBlocklistEntry(entry), after: null },
    };
  });
  return { status: 200, data: deleted(removed.id, 'blocklist_entry') };
};

export const adminListBlocklist: AdminHandler<'adminListBlocklist'> = async ({ query }, { services }) => {
  const { page, limit } = query;
  const { rows, total } = await listBlocklist(services.db, { number: query.number }, { page, limit });
  return { status: 200, data: rows.map(toBlocklistEntry), pagination: toPagination(page, limit, total) };
};
