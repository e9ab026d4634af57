import pg from 'pg';

export interface CreatedDatabase {
  url: string;
  /** Drops the database, ending any connection still open to it. */
  drop: () => Promise<void>;
}

/** Runs one statement over a connection of its own: CREATE and DROP DATABASE refuse to run inside a transaction, where a pool's connection may be. */
async function runAlone(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A new, empty database called `name` on the server that `serverUrl` (the URL of any database
 * on it) reaches, for a run, a test or a bench of its own. `name` is an identifier the caller
 * made, never input.
 */
export async function createDatabase(serverUrl: string, name: string): Promise<CreatedDatabase> {
  await runAlone(serverUrl, `CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => runAlone(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
