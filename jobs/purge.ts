import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { purgeEarlyReports } from '../db/early-reports.ts';
import { purgeOldEvents } from '../db/events.ts';
import { QUEUES } from '../db/queues.ts';

/** How long a delivery report may wait for the submit response that names its message. */
const EARLY_REPORT_DAYS = 7;

/** Once a day (03:17 UTC), in one process of however many share the database. */
export async function startDailyPurge(boss: PgBoss, db: Knex): Promise<void> {
  await boss.schedule(QUEUES.dailyPurge.name, '17 3 * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.dailyPurge.name, async () => {
    await purgeOldEvents(db);
    await purgeEarlyReports(db, EARLY_REPORT_DAYS);
  });
}
