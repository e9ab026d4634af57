import knexPkg from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';

// numeric (money) and bigint (counts) come back as strings: exact, converted where they are read.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

/**
 * A pool of connections. `durable: false` turns off synchronous commit on its connections: for
 * figures that may lose their last milliseconds in a crash (request counters), a commit then
 * costs no disk flush.
 */
export function connect(databaseUrl: string, poolMax = 10, options: { durable?: boolean } = {}): Knex {
  const connection: Knex.PgConnectionConfig & { pipeline: boolean } = {
    connectionString: databaseUrl,
    application_name: 'dispatch',
    // A server that does not answer must not hold a request for long: connecting gives up after
    // 5 s and waiting for a pooled connection after 10 s, and the caller answers 503.
    connectionTimeoutMillis: 5000,
    // Statements that a transaction issues side by side (sideBySide, db/statements.ts) are written
    // at once and answered in order, in one round trip: without it the driver sends each after the
    // last answer.
    pipeline: true,
    ...(options.durable === false && { options: '-c synchronous_commit=off' }),
  };
  return knexPkg({
    client: 'pg',
    connection,
    pool: { min: 0, max: poolMax },
    acquireConnectionTimeout: 10_000,
  });
}

export type { Knex };
