import type { Knex } from 'knex';
import { Batcher } from '../lib/batcher.ts';
import { runPrepared } from '../db/statements.ts';

const WINDOW_SECONDS = 60;

export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

interface Request {
  key: string;
  limit: number;
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
 * round trip of its own: concurrent requests are counted together in one statement (lib/batcher.ts),
 * and each gets its place in the window in arrival order.
 */
export class KeyRateLimiter {
  private readonly batcher: Batcher<Request, RateLimitOutcome>;

  constructor(db: Knex) {
    this.batcher = new Batcher({ run: (requests) => count(db, requests) });
  }

  consume(keyId: string, limit: number): Promise<RateLimitOutcome> {
    return this.batcher.submit({ key: `key:${keyId}`, limit });
  }
}

async function count(db: Knex, requests: Request[]): Promise<RateLimitOutcome[]> {
  const perKey = new Map<string, number>();
  for (const { key } of requests) perKey.set(key, (perKey.get(key) ?? 0) + 1);
  const keys = [...perKey.keys()].sort();
  const rows = await runPrepared<{ key: string; points: number; ms_left: number }>(db, {
    name: 'count-key-requests',
    text: COUNT_REQUESTS,
    values: [keys, keys.map((key) => perKey.get(key)), WINDOW_SECONDS * 1000],
  });
  // A key's requests take the places after the count before this statement, in arrival order.
  const next = new Map(rows.map((row) => [row.key, { place: row.points - (perKey.get(row.key) as number) + 1, msLeft: row.ms_left }]));
  return requests.map(({ key, limit }) => {
    const counted = next.get(key);
    if (!counted) throw new Error(`the request count of ${key} was not returned`);
    return outcomeOf(counted.place++, limit, counted.msLeft);
  });
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
