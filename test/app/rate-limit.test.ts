import { expect } from 'chai';
import { KeyRateLimiter, type RateLimitOutcome } from '../../app/rate-limit.ts';
import { connect, type Knex } from '../../db/connection.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { harness } from '../support/harness.ts';

const newKeyId = () => `key_${randomBase62(24)}`;
const allowed = (outcomes: RateLimitOutcome[]) => outcomes.filter((outcome) => outcome.allowed);

describe('the per-key rate limiter', () => {
  const pools: Knex[] = [];
  /** A limiter with connections of its own, as another Dispatch process would have. */
  const processLimiter = (databaseUrl = harness.database.url) => {
    const pool = connect(databaseUrl, 4, { durable: false });
    pools.push(pool);
    return new KeyRateLimiter(pool);
  };

  after(() => Promise.all(pools.map((pool) => pool.destroy())));

  it('counts concurrent requests of one key exactly, each at its own place in the window', async () => {
    const limiter = processLimiter();
    const keyId = newKeyId();
    const outcomes = await Promise.all(Array.from({ length: 25 }, () => limiter.consume(keyId, 10)));
    expect(
      allowed(outcomes)
        .map((outcome) => outcome.remaining)
        .sort((a, b) => a - b),
    ).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const refused of outcomes.filter((outcome) => !outcome.allowed)) {
      expect(refused.remaining).to.equal(0);
      expect(refused.resetSeconds).to.be.within(1, 60);
    }
  });

  it('holds exactly for requests spread over processes, and counts keys apart', async () => {
    const limiters = [processLimiter(), processLimiter()];
    const [shared, other] = [newKeyId(), newKeyId()];
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => limiters[i % 2].consume(shared, 10)));
    expect(allowed(outcomes)).to.have.length(10);
    expect((await limiters[1].consume(other, 10)).remaining).to.equal(9);
  });

  it('starts a new window once the last one has ended', async () => {
    const limiter = processLimiter();
    const keyId = newKeyId();
    await Promise.all([limiter.consume(keyId, 3), limiter.consume(keyId, 3)]);
    await harness
      .db('rate_limits')
      .where({ key: `key:${keyId}` })
      .update({ expire: Date.now() - 1 });
    const fresh = await limiter.consume(keyId, 3);
    expect(fresh).to.include({ allowed: true, remaining: 2 });
    expect(fresh.resetSeconds).to.be.within(59, 60);
  });

  it('answers every waiting request with the error when the count fails', async () => {
    const limiter = processLimiter();
    // Longer than the table's key column holds: the statement is refused.
    const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => limiter.consume(newKeyId().repeat(12), 10)));
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(Array(5).fill('rejected'));
    expect(allowed(await Promise.all([limiter.consume(newKeyId(), 10)]))).to.have.length(1);
  });
});
