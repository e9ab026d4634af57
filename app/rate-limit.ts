import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';

const WINDOW_SECONDS = 60;

export interface RateLimitOutcome {
  allowed: boolean;
  limit: number;
  remaining: number;
  resetSeconds: number;
}

/**
 * Per-key request counting in fixed 60-second windows, stored in PostgreSQL so that every
 * Dispatch process sharing the database counts against the same window exactly (one atomic
 * upsert per request). Keys differ in their limit, and a limiter's limit is fixed, so there is
 * one limiter per limit value over the same table and key space.
 */
export class KeyRateLimiter {
  private readonly limiters = new Map<number, RateLimiterPostgres>();
  private readonly db: Knex;

  constructor(db: Knex) {
    this.db = db;
  }

  private limiterFor(points: number): RateLimiterPostgres {
    let limiter = this.limiters.get(points);
    if (!limiter) {
      limiter = new RateLimiterPostgres({
        storeClient: this.db,
        storeType: 'knex',
        tableName: 'rate_limits',
        tableCreated: true,
        clearExpiredByTimeout: false,
        keyPrefix: 'key',
        points,
        duration: WINDOW_SECONDS,
      });
      this.limiters.set(points, limiter);
    }
    return limiter;
  }

  async consume(keyId: string, limit: number): Promise<RateLimitOutcome> {
    try {
      const result = await this.limiterFor(limit).consume(keyId);
      return { allowed: true, limit, remaining: result.remainingPoints, resetSeconds: Math.ceil(result.msBeforeNext / 1000) };
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) throw outcome;
      return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)) };
    }
  }
}

/** The IETF draft's structured-field headers (draft-ietf-httpapi-ratelimit-headers). */
export const rateLimitHeaders = (outcome: RateLimitOutcome): Record<string, string> => ({
  'RateLimit-Policy': `"default";q=${outcome.limit};w=${WINDOW_SECONDS}`,
  RateLimit: `"default";r=${outcome.remaining};t=${outcome.resetSeconds}`,
});
