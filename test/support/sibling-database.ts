import pg from 'pg';
import { randomBase62 } from '../../domain/ids.ts';
import { harness } from './harness.ts';

async function onServer(sql: string): Promise<void> {
  const admin = new URL(harness.database.url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, empty database on the server of the run's database, for a Dispatch of a test's own
 * whose settings differ from the shared instance's (every instance on one database works the
 * same queues). `drop` removes it.
 */
export async function siblingDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `dispatch_sibling_${randomBase62(10).toLowerCase()}`;
  await onServer(`CREATE DATABASE ${name}`);
  const url = new URL(harness.database.url);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => onServer(`DROP DATABASE ${name} WITH (FORCE)`) };
}
