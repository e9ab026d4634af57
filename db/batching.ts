import { createHash } from 'node:crypto';
import type { Knex } from 'knex';

interface Waiting<Request, Answer> {
  request: Request;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<Request, Answer> {
  /** Answers one value per request, in their order; an Error answers its request alone with a refusal. */
  run: (requests: Request[]) => Promise<(Answer | Error)[]>;
  /**
   * When given, a batch that fails as a whole is answered request by request with it, in
   * arrival order, as if each had come alone (a group commit whose one send may not go beside
   * the others); without it, every request of the batch fails with the batch's error.
   */
  runOne?: (request: Request) => Promise<Answer>;
  /** Requests one batch may hold (default: all that wait). */
  maxBatch?: number;
  /** Batches under way at once (default 2). */
  maxInFlight?: number;
}

/**
 * Answers requests in batches, one statement (or transaction) per batch: the requests that
 * arrive in one turn of the event loop go together, and those that arrive while `maxInFlight`
 * batches are under way wait for the next. Under load a request costs a fraction of a round
 * trip; a lone request waits for nothing but the end of its turn.
 */
export class Batcher<Request, Answer> {
  private readonly options: Required<Omit<BatcherOptions<Request, Answer>, 'runOne'>> & Pick<BatcherOptions<Request, Answer>, 'runOne'>;
  private waiting: Waiting<Request, Answer>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(options: BatcherOptions<Request, Answer>) {
    this.options = { maxBatch: Number.POSITIVE_INFINITY, maxInFlight: 2, ...options };
  }

  submit(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.answer(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async answer(batch: Waiting<Request, Answer>[]): Promise<void> {
    const { run, runOne } = this.options;
    let answers: (Answer | Error)[];
    try {
      answers = await run(batch.map((waiting) => waiting.request));
    } catch (error) {
      if (!runOne) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      for (const waiting of batch) await runOne(waiting.request).then(waiting.resolve, waiting.reject);
      return;
    }
    batch.forEach((waiting, index) => {
      const answer = answers[index];
      if (answer instanceof Error) waiting.reject(answer);
      else waiting.resolve(answer);
    });
  }
}

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
  const connection = await db.client.acquireConnection();
  try {
    const { rows } = await connection.query(statement);
    return rows;
  } finally {
    await db.client.releaseConnection(connection);
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
  const connection = await db.client.acquireConnection();
  try {
    return await Promise.all(statements.map(async (statement) => (await connection.query(statement)).rows));
  } finally {
    await db.client.releaseConnection(connection);
  }
}

/**
 * The name of a prepared statement whose text code builds (from the columns given, say): short,
 * as the server cuts names at 63 bytes, and one per text, as a connection keeps a name's first text.
 */
export const statementName = (kind: string, text: string): string => `${kind}-${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
