import type { Knex } from 'knex';
import { connect } from '../../db/connection.ts';
import { createDatabase, type CreatedDatabase } from '../../db/databases.ts';
import { migrationConfig } from '../../db/migrate.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { harness } from './harness.ts';

/**
 * A fresh, empty database on the server of the run's database, for a Dispatch of a test's own
 * whose settings differ from the shared instance's (every instance on one database works the
 * same queues), or for migrations run from the start. `drop` removes it.
 */
export const siblingDatabase = (): Promise<CreatedDatabase> => createDatabase(harness.database.url, `dispatch_sibling_${randomBase62(10).toLowerCase()}`);

/**
 * Runs `test` on a sibling database migrated up to the one before `migration` (a file of
 * db/migrations), to see what `migration` does to the rows `test` stores first; `applyIt` runs it.
 * The database is dropped after.
 */
export async function beforeMigration(migration: string, test: (db: Knex, applyIt: () => Promise<void>) => Promise<void>): Promise<void> {
  const database = await siblingDatabase();
  const db = connect(database.url);
  try {
    for (;;) {
      const [, pending] = (await db.migrate.list(migrationConfig)) as [unknown[], { file: string }[]];
      if (pending[0].file === migration) break;
      await db.migrate.up(migrationConfig);
    }
    await test(db, async () => {
      await db.migrate.up(migrationConfig);
    });
  } finally {
    await db.destroy();
    await database.drop();
  }
}
