import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { Batcher } from '../lib/batcher.ts';

/*
 * Statements on Knex's connections, as the hot paths need them: prepared by name, issued side by
 * side on a pipelining connection, or several written in one order. knexClient reaches Knex's
 * client for a pooled connection (`client.acquireConnection` and `releaseConnection`, not public
 * API, checked against knex 3.3), since Knex's query builder prepares nothing;
 * test/db/pipelining.test.ts fails when an upgrade changes them.
 */

/** What these statements use of a pooled connection (the driver's client). */
export interface DriverConnection {
  query<Row = unknown>(statement: Statement | string, values?: unknown[]): Promise<{ rows: Row[] }>;
}

/** Knex's client, as far as it is reached here: a pooled connection (the transaction's, in a transaction), and its release. */
export interface KnexClient {
  acquireConnection(): Promise<DriverConnection>;
  releaseConnection(connection: DriverConnection): Promise<void>;
}

/** Knex types its client `any`. */
export const knexClient = (db: Knex): KnexClient => db.client as KnexClient;

/** A batcher per pool, made on first use, whose batches `run` answers on that pool. */
export function pooledBatcher<Request, Answer>(run: (db: Knex, requests: Request[]) => Promise<Answer[]>): (db: Knex) => Batcher<Request, Answer> {
  const batchers = new WeakMap<Knex, Batcher<Request, Answer>>();
  return (db) => {
    let batcher = batchers.get(db);
    if (!batcher) {
      batcher = new Batcher({ run: (requests) => run(db, requests) });
      batchers.set(db, batcher);
    }
    return batcher;
  };
}

/** A statement for the driver: a name makes it prepared on each connection that runs it. */
export interface Statement {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * One named (prepared) statement on a pooled connection, or the transaction's, without Knex's
 * query builder: for the statements that run for every request. Name only statements whose result
 * columns are listed, so that a column added by a migration cannot change a prepared statement's
 * result; without a name the statement is planned as any other.
 */
export async function runPrepared<Row>(db: Knex, statement: Statement): Promise<Row[]> {
  const client = knexClient(db);
  const connection = await client.acquireConnection();
  try {
    const { rows } = await connection.query<Row>(statement);
    return rows;
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * Statements of a transaction issued side by side (one round trip on a pipelining connection):
 * waits for every one to answer before failing with the first failure. With Promise.all, the
 * rollback that failure causes could be written ahead of a statement still on its way (pg-boss
 * reads its queue's settings before it writes), which would then run outside the transaction,
 * on a connection back in the pool.
 */
export async function sideBySide<T extends readonly unknown[] | []>(work: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(work);
  const values: unknown[] = [];
  for (const outcome of settled as PromiseSettledResult<unknown>[]) {
    if (outcome.status === 'rejected') throw outcome.reason;
    values.push(outcome.value);
  }
  return values as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/**
 * Statements written one behind the other on one connection (the transaction's) without waiting
 * for answers: a pipelining connection (db/connection.ts) runs them in this order, each with the
 * snapshot of its own start, in one round trip. Answers the rows of each. Issued as separate
 * calls side by side instead, they would be written in whichever order their code reaches the
 * connection.
 */
export async function runInOrder(db: Knex, statements: Statement[]): Promise<unknown[][]> {
  const client = knexClient(db);
  const connection = await client.acquireConnection();
  try {
    return await Promise.all(statements.map(async (statement) => (await connection.query(statement)).rows));
  } finally {
    await client.releaseConnection(connection);
  }
}

/**
 * The name of a prepared statement whose text code builds (from the columns given, say): short,
 * as the server cuts names at 63 bytes, and one per text, as a connection keeps a name's first text.
 */
export const statementName = (kind: string, text: string): string => `${kind}-${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
