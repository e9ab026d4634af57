import { listOptOuts as listOptOutRows } from '../db/opt-outs.ts';
import { keywordSettingsOf, updateKeywordSettings as changeKeywordSettings } from '../domain/keywords.ts';
import { importOptOuts, liftOptOut } from '../domain/opt-outs.ts';
import { deleted, toKeywordSettings, toOptOut, toPagination } from './representations.ts';
import type { CustomerHandler } from './types.ts';

export const listOptOuts: CustomerHandler<'listOptOuts'> = async ({ query }, { services, caller }) => {
  const { page, limit } = query;
  const { rows, total } = await listOptOutRows(services.db, caller.account.id, { number: query.number }, { page, limit });
  return { status: 200, data: rows.map(toOptOut), pagination: toPagination(page, limit, total) };
};

export const createOptOuts: CustomerHandler<'createOptOuts'> = async ({ body }, { services, caller }) => {
  const results = await importOptOuts(services.db, services.jobs, caller.account.id, body);
  const count = (status: string) => results.filter((result) => result.status === status).length;
  return {
    status: 200,
    data: { object: 'opt_out_import', total: results.length, added: count('added'), unchanged: count('unchanged'), failed: count('failed'), results },
  };
};

export const deleteOptOut: CustomerHandler<'deleteOptOut'> = async ({ params }, { services, caller }) => {
  const removed = await liftOptOut(services.db, services.jobs, caller.account.id, params.number);
  return { status: 200, data: deleted(removed.number, 'opt_out') };
};

export const getKeywordSettings: CustomerHandler<'getKeywordSettings'> = async (_, { services, caller }) => ({
  status: 200,
  data: toKeywordSettings(await keywordSettingsOf(services.db, caller.account.id)),
});

export const updateKeywordSettings: CustomerHandler<'updateKeywordSettings'> = async ({ body }, { services, caller }) => ({
  status: 200,
  data: toKeywordSettings(await changeKeywordSettings(services.db, caller.account.id, body)),
});
