import type { Knex } from 'knex';
import { liveJobValues } from './pg-boss-internals.ts';
import { QUEUES } from './queues.ts';
import { SEND_JOB_FIELDS } from './send-groups.ts';

/** Stranded messages one reconciliation pass takes at most, oldest first. */
export const STRANDED_BATCH = 1000;

/**
 * Pending messages accepted before `before` that no send job will move (its job died or was
 * spent), oldest first. The set difference against the live jobs' messages is computed once
 * (see liveJobValues), then the few it leaves are read by their primary key.
 */
export async function strandedMessageIds(db: Knex, before: Date, limit = STRANDED_BATCH): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `SELECT m.id FROM messages m
     JOIN (SELECT id FROM messages WHERE status = 'pending' AND created_at < ? EXCEPT ${liveJobValues(QUEUES.sendMessage.name, [...SEND_JOB_FIELDS])}) AS stranded ON stranded.id = m.id
     ORDER BY m.created_at LIMIT ?`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}
