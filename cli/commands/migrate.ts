// dispatch migrate: applies pending migrations to DATABASE_URL (as every start does), for
// deployments that migrate in a separate step.
import { Command, Option } from 'commander';
import pg from 'pg';
import { connect, type Knex } from '../../db/connection.ts';
import { migrateLatest } from '../../db/migrate.ts';
import { run, withJson } from '../context.ts';
import { UnavailableError, UsageError } from '../output.ts';

/** Connects once before the pool does, so that an unreachable server is one clean error (knex would also log it). */
async function checkReachable(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new UnavailableError(`cannot connect to the database: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await client.end().catch(() => {});
  }
}

/** The names of the applied migrations (knex's own bookkeeping table). */
async function appliedMigrations(db: Knex): Promise<Set<string>> {
  if (!(await db.schema.hasTable('knex_migrations'))) return new Set();
  const rows = await db('knex_migrations').select<{ name: string }[]>('name').orderBy('id');
  return new Set(rows.map((row) => row.name));
}

export function migrateCommand(): Command {
  return withJson(
    new Command('migrate')
      .description('Apply pending database migrations to DATABASE_URL and list what was applied')
      .addOption(new Option('--database-url <url>', 'PostgreSQL connection string (required)').env('DATABASE_URL')),
  ).action((options: { databaseUrl?: string }, command: Command) =>
    run(command, async ({ out }) => {
      if (!options.databaseUrl)
        throw new UsageError('DATABASE_URL is required: set it or pass --database-url (the embedded database migrates itself on `dispatch serve`)');
      await checkReachable(options.databaseUrl);
      const db = connect(options.databaseUrl, 2);
      try {
        const before = await appliedMigrations(db);
        await migrateLatest(db);
        const applied = [...(await appliedMigrations(db))].filter((name) => !before.has(name));
        out.result({ applied }, () =>
          applied.length === 0
            ? 'Already up to date: no migration to apply.'
            : [`Applied ${applied.length} migration(s):`, ...applied.map((name) => `  ${name}`)].join('\n'),
        );
      } catch (error) {
        throw new UnavailableError(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await db.destroy();
      }
    }),
  );
}
