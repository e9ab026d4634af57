import { blockNumber, unblockNumber } from '../../domain/blocklist.ts';
import { deleted, toBlocklistEntry } from '../representations.ts';
import type { AdminHandler } from '../types.ts';

export const adminCreateBlocklistEntry: AdminHandler<'adminCreateBlocklistEntry'> = async ({ body }, { services }) => ({
  status: 201,
  data: toBlocklistEntry(await blockNumber(services.db, body)),
});

export const adminDeleteBlocklistEntry: AdminHandler<'adminDeleteBlocklistEntry'> = async ({ params, query }, { services }) => ({
  status: 200,
  data: deleted(await unblockNumber(services.db, params.number, query.account_id), 'blocklist_entry'),
});
