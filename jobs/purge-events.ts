import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { purgeOldEvents } from '../db/events.ts';
import { QUEUES } from '../db/queues.ts';

/** Once a day (03:17 UTC), in one process of however many share the database. */
export async function startEventPurge(boss: PgBoss, db: Knex): Promise<void> {
  await boss.schedule(QUEUES.purgeEvents.name, '17 3 * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.purgeEvents.name, async () => {
    await purgeOldEvents(db);
  });
}
