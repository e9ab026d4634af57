import type { Knex } from 'knex';
import { noLiveJob } from './queues.ts';
import { SEND_JOB_FIELDS } from './send-groups.ts';

/** Stranded messages one reconciliation pass takes at most, oldest first. */
export const STRANDED_BATCH = 1000;

/** Pending messages accepted before `before` that no send job will move (its job died or was spent). */
export async function strandedMessageIds(db: Knex, before: Date, limit = STRANDED_BATCH): Promise<string[]> {
  const rows = await db('messages as m')
    .where('m.status', 'pending')
    .andWhere('m.created_at', '<', before)
    .andWhereRaw(noLiveJob('sendMessage', [...SEND_JOB_FIELDS], 'm.id'))
    .orderBy('m.created_at')
    .limit(limit)
    .select('m.id');
  return rows.map((row: { id: string }) => row.id);
}
