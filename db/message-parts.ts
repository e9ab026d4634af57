import type { Knex } from 'knex';

export type PartStatus = 'sent' | 'delivered' | 'undelivered';

export interface PartRow {
  route_id: number;
  provider_message_id: string;
  message_id: string;
  part_number: number;
  status: PartStatus;
}

export async function insertParts(db: Knex, messageId: string, routeId: number, partIds: string[]): Promise<void> {
  if (partIds.length === 0) return;
  await db('message_parts').insert(partIds.map((id, index) => ({ route_id: routeId, provider_message_id: id, message_id: messageId, part_number: index + 1 })));
}

export async function findPart(db: Knex, routeId: number, providerMessageId: string): Promise<PartRow | undefined> {
  return db<PartRow>('message_parts').where({ route_id: routeId, provider_message_id: providerMessageId }).first();
}

/** Sets one part's status and answers the statuses of all the message's parts. */
export async function markPart(db: Knex, part: PartRow, status: PartStatus): Promise<PartStatus[]> {
  await db('message_parts').where({ route_id: part.route_id, provider_message_id: part.provider_message_id }).update({ status });
  const rows = await db<PartRow>('message_parts').where({ message_id: part.message_id }).select('status');
  return rows.map((row) => row.status);
}

/** Whether any of these upstream message ids is one part of a concatenated message. */
export async function anyPartAmong(db: Knex, upstreamIds: { routeId: number; providerMessageId: string }[]): Promise<boolean> {
  const { rows } = await db.raw<{ rows: unknown[] }>(
    `SELECT 1 FROM message_parts p JOIN unnest(?::integer[], ?::text[]) AS v (route_id, provider_message_id)
       ON p.route_id = v.route_id AND p.provider_message_id = v.provider_message_id LIMIT 1`,
    [upstreamIds.map(({ routeId }) => routeId), upstreamIds.map(({ providerMessageId }) => providerMessageId)],
  );
  return rows.length > 0;
}
