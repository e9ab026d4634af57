import { fileURLToPath } from 'node:url';
import type { Knex } from 'knex';
import { knexClient } from './statements.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url));
// An arbitrary constant that names Dispatch's migration lock among the database's advisory locks.
const MIGRATION_LOCK = 0x6469_7370;

/** Where the migrations are and how they load: for knex's migrator, also when a test steps through them one by one. */
export const migrationConfig: Knex.MigratorConfig = { directory: MIGRATIONS_DIR, loadExtensions: ['.ts'] };

/**
 * Applies pending migrations while holding a session advisory lock, so that processes starting
 * together wait for each other instead of tripping over knex's own lock table.
 */
export async function migrateLatest(db: Knex): Promise<void> {
  const client = knexClient(db);
  const connection = await client.acquireConnection();
  try {
    await connection.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await db.migrate.latest(migrationConfig);
    } finally {
      await connection.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    await client.releaseConnection(connection);
  }
}

/** True when every migration on disk has been applied. */
export async function migrationsCurrent(db: Knex): Promise<boolean> {
  const [, pending] = (await db.migrate.list(migrationConfig)) as [unknown[], unknown[]];
  return pending.length === 0;
}
