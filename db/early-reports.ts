import type { Knex } from 'knex';
import { runInOrder, type Statement } from './statements.ts';

type UpstreamIds = { routeId: number; providerMessageId: string }[];

/** The locks on upstream message ids, taken in one order every batch keeps, so that two batches never wait on each other in a cycle. */
function providerMessagesLock(messages: UpstreamIds): Statement {
  const keys = [...new Set(messages.map(({ routeId, providerMessageId }) => `${routeId}:${providerMessageId}`))].sort();
  return { text: 'SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM (SELECT k FROM unnest($1::text[]) AS k ORDER BY k) AS keys', values: [keys] };
}

/**
 * Serialises everything that concerns these upstream message ids for the rest of the
 * transaction: recording their submit responses and applying their delivery reports, so that a
 * report that finds no message can be kept safely until the submit response claims it. The read
 * `then` is written right behind the locks: it runs once they are held, and so sees what their
 * holders committed, without a round trip of its own.
 */
export async function lockProviderMessagesThen<Row>(trx: Knex, messages: UpstreamIds, then: Statement): Promise<Row[]> {
  const [, rows] = await runInOrder(trx, [providerMessagesLock(messages), then]);
  return rows as Row[];
}

export async function keepEarlyReports(trx: Knex, reports: { routeId: number; providerMessageId: string; report: object }[]): Promise<void> {
  if (reports.length === 0) return;
  await trx('early_reports').insert(
    reports.map(({ routeId, providerMessageId, report }) => ({ route_id: routeId, provider_message_id: providerMessageId, report: JSON.stringify(report) })),
  );
}

/** Removes and answers the reports kept for this upstream message, oldest first. */
export async function takeEarlyReports(trx: Knex, routeId: number, providerMessageId: string): Promise<Record<string, unknown>[]> {
  return (await takeEarlyReportsOf(trx, [{ routeId, providerMessageId }])).get(`${routeId}:${providerMessageId}`) ?? [];
}

/** takeEarlyReports for several upstream messages in one statement: the reports of each, oldest first, keyed `<route id>:<provider message id>`. */
export async function takeEarlyReportsOf(
  trx: Knex,
  messages: { routeId: number; providerMessageId: string }[],
): Promise<Map<string, Record<string, unknown>[]>> {
  const { rows } = await trx.raw<{ rows: { id: string; route_id: number; provider_message_id: string; report: Record<string, unknown> }[] }>(
    `DELETE FROM early_reports e USING unnest(?::integer[], ?::text[]) AS v (route_id, provider_message_id)
     WHERE e.route_id = v.route_id AND e.provider_message_id = v.provider_message_id
     RETURNING e.id, e.route_id, e.provider_message_id, e.report`,
    [messages.map(({ routeId }) => routeId), messages.map(({ providerMessageId }) => providerMessageId)],
  );
  const reports = new Map<string, Record<string, unknown>[]>();
  for (const row of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
    const key = `${row.route_id}:${row.provider_message_id}`;
    reports.set(key, [...(reports.get(key) ?? []), row.report]);
  }
  return reports;
}

/** Deletes kept reports older than `days`: their message never got that upstream id (a provider's mistake). */
export async function purgeEarlyReports(db: Knex, days: number, now = new Date()): Promise<number> {
  return Number(
    await db('early_reports')
      .where('created_at', '<', new Date(now.getTime() - days * 86_400_000))
      .delete(),
  );
}
