import type { Knex } from 'knex';

/** Which message a part belongs to: the sender's reference is only unique with the rest. */
export interface PartGroup {
  route_id: number;
  from: string;
  to: string;
  reference: number;
  total: number;
}

export interface InboundPartRow extends PartGroup {
  id: number;
  sequence: number;
  body: string;
  encoding: 'GSM-7' | 'UCS-2' | 'Latin-1';
  received_at: Date;
  created_at: Date;
  completed_at: Date | null;
}

export type NewInboundPart = Omit<InboundPartRow, 'id' | 'created_at' | 'completed_at'>;

const groupOf = (group: PartGroup): PartGroup => ({ route_id: group.route_id, from: group.from, to: group.to, reference: group.reference, total: group.total });

/**
 * Serialises, until the transaction ends, everything done to one message's parts: two parts
 * arriving at once would otherwise each miss the other and neither would join the message.
 */
export async function lockPartGroup(trx: Knex.Transaction, group: PartGroup): Promise<void> {
  const key = JSON.stringify(['inbound-parts', group.route_id, group.from, group.to, group.reference, group.total]);
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
}

/** Stores a part; false when it was already here (a repeat). */
export async function insertPart(trx: Knex.Transaction, part: NewInboundPart): Promise<boolean> {
  const inserted = await trx('inbound_parts').insert(part).onConflict(['route_id', 'from', 'to', 'reference', 'total', 'sequence']).ignore().returning('id');
  return inserted.length > 0;
}

/** The group's parts still waiting for their message, by sequence. */
export async function waitingParts(trx: Knex.Transaction, group: PartGroup): Promise<InboundPartRow[]> {
  return trx<InboundPartRow>('inbound_parts').where(groupOf(group)).whereNull('completed_at').orderBy('sequence');
}

/** The group's waiting parts, by sequence, if one of them has waited longer than `seconds`; none otherwise. */
export async function partsWaitedOut(trx: Knex.Transaction, group: PartGroup, seconds: number): Promise<InboundPartRow[]> {
  const parts = await trx<InboundPartRow>('inbound_parts')
    .where(groupOf(group))
    .whereNull('completed_at')
    .orderBy('sequence')
    .select<(InboundPartRow & { waited_out: boolean })[]>('*', trx.raw('created_at < clock_timestamp() - make_interval(secs => ?) AS waited_out', [seconds]));
  if (!parts.some((part) => part.waited_out)) return [];
  return parts.map(({ waited_out: _, ...part }) => part);
}

export async function markPartsCompleted(trx: Knex.Transaction, ids: number[]): Promise<void> {
  await trx('inbound_parts')
    .whereIn('id', ids)
    .update({ completed_at: trx.raw('clock_timestamp()') });
}

/** Groups with a part that has waited longer than `seconds` (by the database's clock), oldest first. */
export async function groupsWaitingLongerThan(db: Knex, seconds: number, limit = 1000): Promise<PartGroup[]> {
  return db('inbound_parts')
    .whereNull('completed_at')
    .groupBy('route_id', 'from', 'to', 'reference', 'total')
    .havingRaw('min(created_at) < clock_timestamp() - make_interval(secs => ?)', [seconds])
    .orderByRaw('min(created_at)')
    .limit(limit)
    .select('route_id', 'from', 'to', 'reference', 'total');
}

/** Forgets parts whose message was stored more than `seconds` ago; how many. */
export async function deletePartsCompletedBefore(db: Knex, seconds: number): Promise<number> {
  return db('inbound_parts').whereNotNull('completed_at').andWhereRaw('completed_at < clock_timestamp() - make_interval(secs => ?)', [seconds]).delete();
}
