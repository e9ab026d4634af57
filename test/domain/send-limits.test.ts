import { expect } from 'chai';
import { ApiError } from '../../domain/errors.ts';
import { checkSendLimits } from '../../domain/send-limits.ts';
import { createAdminKey, createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

interface Limits {
  daily_limit: number | null;
  monthly_limit: number | null;
}

async function limitedKey(limits: Limits) {
  const tenant = await createTenant();
  const key = await createAdminKey(tenant.accountId, { name: 'Limited', ...limits });
  return { id: key.id, ...limits };
}

/** Counts `count` sends through the key at `now` in a transaction of their own: 'ok', or the refusal's code, message and Retry-After. */
async function send(key: { id: string } & Limits, count: number, now: string): Promise<string | { code: string; message: string; retryAfter: string }> {
  try {
    await harness.db.transaction((trx) => checkSendLimits(trx, key, count, new Date(now)));
    return 'ok';
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { code: error.code, message: error.message, retryAfter: error.headers['Retry-After'] };
  }
}

describe("a key's daily and monthly limits", () => {
  it('refuses what would pass the daily limit, saying how many were sent, with a Retry-After to UTC midnight', async () => {
    const key = await limitedKey({ daily_limit: 3, monthly_limit: null });
    expect(await send(key, 2, '2026-03-31T10:00:00Z')).to.equal('ok');
    expect(await send(key, 2, '2026-03-31T23:59:30Z')).to.deep.equal({
      code: 'daily_limit_exceeded',
      message: 'This key may send 3 messages per UTC day; 2 sent, 2 more asked.',
      retryAfter: '30',
    });
    expect(await send(key, 1, '2026-03-31T23:59:31Z')).to.equal('ok');
    expect(await send(key, 1, '2026-03-31T23:59:59Z')).to.have.property('code', 'daily_limit_exceeded');
  });

  it('starts a new day and a new month at UTC midnight, and refuses past the month with a Retry-After to its end', async () => {
    const key = await limitedKey({ daily_limit: 2, monthly_limit: 3 });
    expect(await send(key, 2, '2026-04-30T23:00:00Z')).to.equal('ok');
    expect(await send(key, 1, '2026-04-30T23:59:59Z')).to.have.property('code', 'daily_limit_exceeded');
    expect(await send(key, 2, '2026-05-01T00:00:00Z')).to.equal('ok');
    expect(await send(key, 1, '2026-05-02T00:00:00Z')).to.equal('ok');
    expect(await send(key, 1, '2026-05-31T00:00:00Z')).to.deep.equal({
      code: 'monthly_limit_exceeded',
      message: 'This key may send 3 messages per UTC month; 3 sent, 1 more asked.',
      retryAfter: '86400',
    });
    expect(await send(key, 1, '2026-06-01T00:00:00Z')).to.equal('ok');
  });

  it('leaves both counts as they were when either limit refuses', async () => {
    const key = await limitedKey({ daily_limit: 5, monthly_limit: 6 });
    expect(await send(key, 4, '2026-07-01T08:00:00Z')).to.equal('ok');
    expect(await send(key, 3, '2026-07-02T08:00:00Z')).to.have.property('code', 'monthly_limit_exceeded');
    expect(await send(key, 2, '2026-07-02T09:00:00Z')).to.equal('ok');
    expect(await send(key, 1, '2026-07-02T10:00:00Z')).to.have.property('code', 'monthly_limit_exceeded');
  });

  it("reads the month from the key's count in one statement, not from its messages: a million sends cost what the first did", async () => {
    const key = await limitedKey({ daily_limit: null, monthly_limit: 1_000_001 });
    await harness.db('key_send_counts').insert({ api_key_id: key.id, period: 'month', starts_on: '2026-08-01', count: 1_000_000 });
    const statements: string[] = [];
    const record = (query: { sql: string }) => statements.push(query.sql);
    harness.db.on('query', record);
    try {
      expect(await send(key, 1, '2026-08-20T12:00:00Z')).to.equal('ok');
    } finally {
      harness.db.off('query', record);
    }
    expect(statements.filter((sql) => !/^(BEGIN|COMMIT)/i.test(sql))).to.have.length(1);
    expect(await send(key, 1, '2026-08-20T12:00:01Z')).to.deep.include({
      code: 'monthly_limit_exceeded',
      message: 'This key may send 1000001 messages per UTC month; 1000001 sent, 1 more asked.',
    });
  });

  it('writes no count for a key without limits', async () => {
    const key = await limitedKey({ daily_limit: null, monthly_limit: null });
    expect(await send(key, 5, '2026-09-01T00:00:00Z')).to.equal('ok');
    expect(await harness.db('key_send_counts').where({ api_key_id: key.id })).to.deep.equal([]);
  });
});
