import type { Knex } from 'knex';

interface Waiting<Request, Answer> {
  request: Request;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

/**
 * Answers requests in batches, one statement per batch: the requests read from the network in
 * one turn of the event loop go together, and those that arrive while `maxInFlight` statements
 * are under way wait for the next. Under load a request costs a fraction of a round trip; a
 * lone request waits for nothing. `run` answers one value per request, in their order; when it
 * fails, every request of its batch fails with the same error.
 */
export class Batcher<Request, Answer> {
  private readonly run: (requests: Request[]) => Promise<Answer[]>;
  private readonly maxInFlight: number;
  private waiting: Waiting<Request, Answer>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(run: (requests: Request[]) => Promise<Answer[]>, maxInFlight = 2) {
    this.run = run;
    this.maxInFlight = maxInFlight;
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
    if (this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight++;
    this.answer(batch).finally(() => {
      this.inFlight--;
      this.pump();
    });
  }

  private async answer(batch: Waiting<Request, Answer>[]): Promise<void> {
    try {
      const answers = await this.run(batch.map((waiting) => waiting.request));
      batch.forEach((waiting, index) => waiting.resolve(answers[index]));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
}

/** A batcher per pool, made on first use, whose batches `run` answers on that pool. */
export function pooledBatcher<Request, Answer>(run: (db: Knex, requests: Request[]) => Promise<Answer[]>): (db: Knex) => Batcher<Request, Answer> {
  const batchers = new WeakMap<Knex, Batcher<Request, Answer>>();
  return (db) => {
    let batcher = batchers.get(db);
    if (!batcher) {
      batcher = new Batcher((requests) => run(db, requests));
      batchers.set(db, batcher);
    }
    return batcher;
  };
}

/**
 * One named (prepared) statement on a pooled connection, without Knex's query builder: for the
 * statements that run for every request. Name only statements whose result columns are listed,
 * so that a column added by a migration cannot change a prepared statement's result.
 */
export async function runPrepared<Row>(db: Knex, statement: { name: string; text: string; values: unknown[] }): Promise<Row[]> {
  const connection = await db.client.acquireConnection();
  try {
    const { rows } = await connection.query(statement);
    return rows;
  } finally {
    await db.client.releaseConnection(connection);
  }
}
