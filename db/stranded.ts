import type { Knex } from 'knex';
import { liveJobValues } from './pg-boss-internals.ts';
import { QUEUES } from './queues.ts';
import { SEND_JOB_FIELDS } from './send-groups.ts';

/** Stranded messages one reconciliation pass takes at most, oldest first. */
export const STRANDED_BATCH = 1000;

/**
 * Pending messages due before `before` (accepted then, or scheduled for then) that no send job
 * will move (its job died or was spent), oldest first. The set difference against the live jobs'
 * messages is computed once (see liveJobValues), then the few it leaves are read by their primary
 * key. Messages not yet due, and the jobs waiting for them, are left out of both sides: a
 * scheduled message's job starts at its send_at, so a job still waiting to start carries only
 * messages that are not due yet, and an account may hold a million of them.
 */
export async function strandedMessageIds(db: Knex, before: Date, limit = STRANDED_BATCH): Promise<string[]> {
  const { rows } = await db.raw<{ rows: { id: string }[] }>(
    `SELECT m.id FROM messages m
     JOIN (SELECT id FROM messages WHERE status = 'pending' AND coalesce(send_at, created_at) < ?
           EXCEPT ${liveJobValues(QUEUES.sendMessage.name, [...SEND_JOB_FIELDS], { startedOnly: true })}) AS stranded ON stranded.id = m.id
     ORDER BY m.created_at LIMIT ?`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}
