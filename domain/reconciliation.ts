import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import { strandedMessageIds } from '../db/stranded.ts';

/** A message younger than this may still be between its acceptance and its job's first run. */
const STRANDED_AFTER_MS = 60_000;

/**
 * Gives every pending message that no live job will move a send job again. The job applies the
 * rules to what it finds: a submission left in flight is an unknown outcome, and a message past
 * the send window fails and is refunded. So every message leaves `pending` within the send window
 * plus one reconciliation period.
 */
export async function reconcileMessages(db: Knex, jobs: JobQueue, now = new Date()): Promise<number> {
  const ids = await strandedMessageIds(db, new Date(now.getTime() - STRANDED_AFTER_MS));
  if (ids.length > 0)
    await db.transaction((trx) =>
      jobs.enqueueMany(
        trx,
        'sendMessage',
        ids.map((id) => ({ message_ids: [id] })),
      ),
    );
  return ids.length;
}
