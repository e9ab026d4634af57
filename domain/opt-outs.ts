import type { Knex } from 'knex';
import { deleteOptOut, insertOptOuts, lockNumbersExclusively, type OptOutChange, type OptOutRow, type OptOutSource } from '../db/opt-outs.ts';
import type { JobQueue } from '../db/queues.ts';
import { notFound } from './errors.ts';
import { recordSubjectEvents } from './events.ts';
import { numberProblem } from './phone-numbers.ts';

export type { OptOutChange, OptOutSource };

/** An opt-out as callers see it, in API answers and in event payloads alike. */
export interface OptOutView {
  number: string;
  object: 'opt_out';
  source: OptOutSource;
  reason: string | null;
  keyword: string | null;
  created_at: string;
}

export const optOutView = (row: OptOutRow): OptOutView => ({
  number: row.number,
  object: 'opt_out',
  source: row.source,
  reason: row.reason,
  keyword: row.keyword,
  created_at: new Date(row.created_at).toISOString(),
});

/**
 * Opts these numbers out of the account's messages in the caller's transaction, in one statement
 * for any count, with one recipient.opted_out event each. The exclusive locks wait for sends of
 * these numbers already past their lookup, and hold back those not yet there until commit.
 * Answers the opt-outs it added (numbers already opted out keep their record).
 */
export async function optOutMany(trx: Knex.Transaction, jobs: JobQueue, accountId: string, numbers: string[], change: OptOutChange): Promise<OptOutRow[]> {
  await lockNumbersExclusively(trx, accountId, numbers);
  const inserted = await insertOptOuts(trx, accountId, numbers, change);
  await recordSubjectEvents(
    trx,
    jobs,
    inserted.map((row) => ({ accountId, type: 'recipient.opted_out' as const, data: { ...optOutView(row) } })),
  );
  return inserted;
}

/** Opts `number` out of every message from the account, recording the change; false if it already was. Emits recipient.opted_out. */
export async function optOut(trx: Knex.Transaction, jobs: JobQueue, accountId: string, number: string, change: OptOutChange): Promise<boolean> {
  return (await optOutMany(trx, jobs, accountId, [number], change)).length === 1;
}

/**
 * Undoes an opt-out, recording the change, in the caller's transaction; answers the opt-out
 * removed. A keyword opt-in undoes only an opt-out that came by keyword: one imported or set by
 * the account stands until the account removes it. Emits recipient.opted_in (data: the opt-out undone).
 */
export async function removeOptOut(
  trx: Knex.Transaction,
  jobs: JobQueue,
  accountId: string,
  number: string,
  change: OptOutChange,
): Promise<OptOutRow | undefined> {
  await lockNumbersExclusively(trx, accountId, [number]);
  const removed = await deleteOptOut(trx, accountId, number, change, change.source === 'keyword' ? 'keyword' : undefined);
  if (removed) await recordSubjectEvents(trx, jobs, [{ accountId, type: 'recipient.opted_in', data: { ...optOutView(removed) } }]);
  return removed;
}

/** Undoes an opt-out (a keyword opt-in undoes only one that came by keyword); false if nothing changed. Emits recipient.opted_in. */
export async function optIn(
  trx: Knex.Transaction,
  jobs: JobQueue,
  accountId: string,
  number: string,
  change: { source: OptOutSource; keyword?: string | null },
): Promise<boolean> {
  return (await removeOptOut(trx, jobs, accountId, number, change)) !== undefined;
}

export type ImportStatus = 'added' | 'unchanged' | 'failed';

export interface ImportResult {
  number: string;
  status: ImportStatus;
  error: { code: string; message: string } | null;
}

/**
 * The account's import of up to 10,000 numbers (the document's limit), each reported on its own
 * in request order: added, unchanged (already opted out, or earlier in the request) or failed (not
 * a number that can exist). One transaction and one insert for all of them.
 */
export async function importOptOuts(
  db: Knex,
  jobs: JobQueue,
  accountId: string,
  request: { numbers: string[]; reason?: string | null },
): Promise<ImportResult[]> {
  const problems = request.numbers.map(numberProblem);
  const valid = request.numbers.filter((_, index) => problems[index] === null);
  const added = await db.transaction(
    async (trx) => new Set((await optOutMany(trx, jobs, accountId, valid, { source: 'api', reason: request.reason ?? null })).map((row) => row.number)),
  );
  const reported = new Set<string>();
  return request.numbers.map((number, index) => {
    const problem = problems[index];
    if (problem !== null) return { number, status: 'failed', error: { code: 'number_invalid', message: problem } };
    const first = added.has(number) && !reported.has(number);
    reported.add(number);
    return { number, status: first ? 'added' : 'unchanged', error: null };
  });
}

/** The account lifts an opt-out of any source; 404 when the number is not opted out. */
export async function liftOptOut(db: Knex, jobs: JobQueue, accountId: string, number: string): Promise<OptOutRow> {
  const removed = await db.transaction((trx) => removeOptOut(trx, jobs, accountId, number, { source: 'api' }));
  if (!removed) throw notFound('opt-out', number);
  return removed;
}
