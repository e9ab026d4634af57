import type { Knex } from 'knex';

/**
 * Serialises everything that concerns one upstream message id for the rest of the transaction:
 * recording its submit response and applying its delivery reports. A report that finds no
 * message can then be kept safely until the submit response claims it.
 */
export async function lockProviderMessage(trx: Knex, routeId: number, providerMessageId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`${routeId}:${providerMessageId}`]);
}

export async function keepEarlyReport(trx: Knex, routeId: number, providerMessageId: string, report: object): Promise<void> {
  await trx('early_reports').insert({ route_id: routeId, provider_message_id: providerMessageId, report: JSON.stringify(report) });
}

/** Removes and answers the reports kept for this upstream message, oldest first. */
export async function takeEarlyReports(trx: Knex, routeId: number, providerMessageId: string): Promise<Record<string, unknown>[]> {
  const rows = await trx('early_reports').where({ route_id: routeId, provider_message_id: providerMessageId }).orderBy('id').select('id', 'report');
  if (rows.length > 0) await trx('early_reports').whereIn('id', rows.map((row: { id: number }) => row.id)).delete();
  return rows.map((row: { report: Record<string, unknown> }) => row.report);
}

/** Deletes kept reports older than `days`: their message never got that upstream id (a provider's mistake). */
export async function purgeEarlyReports(db: Knex, days: number, now = new Date()): Promise<number> {
  return Number(await db('early_reports').where('created_at', '<', new Date(now.getTime() - days * 86_400_000)).delete());
}
