import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { QUEUES } from '../db/queues.ts';
import { foldStatsStripes } from '../domain/stats.ts';

/** Every ten minutes, in one process of however many share the database. */
export async function startStatsFold(boss: PgBoss, db: Knex): Promise<void> {
  await boss.schedule(QUEUES.foldStats.name, '*/10 * * * *', {}, { tz: 'UTC' });
  await boss.work(QUEUES.foldStats.name, async () => {
    await foldStatsStripes(db);
  });
}
