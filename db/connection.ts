import knexPkg from 'knex';
import type { Knex } from 'knex';
import pg from 'pg';

// numeric (money) and bigint (counts) come back as strings: exact, converted where they are read.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export function connect(databaseUrl: string, poolMax = 10): Knex {
  return knexPkg({
    client: 'pg',
    connection: { connectionString: databaseUrl, application_name: 'dispatch' },
    pool: { min: 0, max: poolMax },
  });
}

export type { Knex };
