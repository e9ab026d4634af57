import type { Knex } from 'knex';

const WINDOW_SECONDS = 60;
/** Statements counting at once; requests that arrive meanwhile wait and are counted together in the next. */
const MAX_IN_FLIGHT = 2;

export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

interface Waiting {
  key: string;
  limit: number;
  resolve: (outcome: RateLimitOutcome) => void;
  reject: (error: unknown) => void;
}

/**
 * One upsert counts a batch of requests: each key's window starts with its first request and
 * lasts 60 seconds by the database's clock; the row's lock orders concurrent statements, so
 * every process sharing the database counts against the same window exactly. Keys are written
 * in sorted order so that two processes' batches never deadlock. The table and key format are
 * those rate-limiter-flexible used, so processes of the previous release count along.
 */
const COUNT_REQUESTS = `
  INSERT INTO rate_limits AS counted (key, points, expire)
  SELECT batch.key, batch.points, clock.now_ms + $3
  FROM unnest($1::text[], $2::integer[]) AS batch (key, points),
       (SELECT (extract(epoch FROM now()) * 1000)::bigint AS now_ms) AS clock
  ORDER BY batch.key
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN coalesce(counted.expire, 0) <= excluded.expire - $3 THEN excluded.points ELSE counted.points + excluded.points END,
    expire = CASE WHEN coalesce(counted.expire, 0) <= excluded.expire - $3 THEN excluded.expire ELSE counted.expire END
  RETURNING key, points, expire - (extract(epoch FROM now()) * 1000)::bigint AS ms_left`;

/**
 * Per-key request counting in fixed 60-second windows, stored in PostgreSQL. A request costs no
 * round trip of its own: the requests that arrive while a count is under way are counted
 * together in one statement, and each gets its place in the window in arrival order.
 */
export class KeyRateLimiter {
  private readonly db: Knex;
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(db: Knex) {
    this.db = db;
  }

  consume(keyId: string, limit: number): Promise<RateLimitOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key: `key:${keyId}`, limit, resolve, reject });
      if (!this.scheduled) {
        // Requests read from the network in the same turn of the event loop share a statement.
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  private pump(): void {
    if (this.inFlight >= MAX_IN_FLIGHT || this.waiting.length === 0) return;
    const batch = this.waiting;
    this.waiting = [];
    this.inFlight++;
    this.count(batch)
      .catch((error: unknown) => {
        for (const request of batch) request.reject(error);
      })
      .finally(() => {
        this.inFlight--;
        this.pump();
      });
  }

  private async count(batch: Waiting[]): Promise<void> {
    const perKey = new Map<string, Waiting[]>();
    for (const request of batch) {
      const same = perKey.get(request.key);
      if (same) same.push(request);
      else perKey.set(request.key, [request]);
    }
    const keys = [...perKey.keys()].sort();
    const connection = await this.db.client.acquireConnection();
    let rows: { key: string; points: number; ms_left: number }[];
    try {
      ({ rows } = await connection.query({
        name: 'count-key-requests',
        text: COUNT_REQUESTS,
        values: [keys, keys.map((key) => (perKey.get(key) as Waiting[]).length), WINDOW_SECONDS * 1000],
      }));
    } finally {
      await this.db.client.releaseConnection(connection);
    }
    const counted = new Map(rows.map((row) => [row.key, row]));
    for (const [key, requests] of perKey) {
      const row = counted.get(key);
      if (!row) throw new Error(`the request count of ${key} was not returned`);
      const first = row.points - requests.length + 1;
      requests.forEach((request, index) => request.resolve(outcomeOf(first + index, request.limit, row.ms_left)));
    }
  }
}

function outcomeOf(place: number, limit: number, msLeft: number): RateLimitOutcome {
  const allowed = place <= limit;
  const resetSeconds = Math.ceil(Math.max(msLeft, 0) / 1000);
  return { allowed, limit, remaining: Math.max(limit - place, 0), resetSeconds: allowed ? resetSeconds : Math.max(1, resetSeconds) };
}

/** The IETF draft's structured-field headers (draft-ietf-httpapi-ratelimit-headers). */
export const rateLimitHeaders = (outcome: RateLimitOutcome): Record<string, string> => ({
  'RateLimit-Policy': `"default";q=${outcome.limit};w=${WINDOW_SECONDS}`,
  RateLimit: `"default";r=${outcome.remaining};t=${outcome.resetSeconds}`,
});
