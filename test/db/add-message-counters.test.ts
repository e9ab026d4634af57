import { expect } from 'chai';
import { beforeMigration } from '../support/sibling-database.ts';

const MIGRATION = '20261122110000_add_message_counters.ts';

describe('the migration that adds message counters', () => {
  it("backfills each account's counts by status, and the current day and month of keys with limits, as the limits counted them", async () => {
    await beforeMigration(MIGRATION, async (db, applyIt) => {
      await db('accounts').insert([
        { id: 'acct_a', email: 'a@example.com', name: 'A' },
        { id: 'acct_b', email: 'b@example.com', name: 'B' },
      ]);
      const key = (id: string, limits: { daily_limit?: number; monthly_limit?: number }) => ({
        id,
        account_id: 'acct_a',
        name: id,
        key_hash: Buffer.from(id),
        key_hint: id,
        permissions: ['sms:send'],
        rate_limit: 600,
        ...limits,
      });
      await db('api_keys').insert([
        key('key_limited', { daily_limit: 100, monthly_limit: 1000 }),
        key('key_monthly', { monthly_limit: 1000 }),
        key('key_free', {}),
      ]);
      const {
        rows: [times],
      } = await db.raw(
        `SELECT now(), date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month_start, date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day_start`,
      );
      const lastMonth = new Date(times.month_start.getTime() - 1000);
      let n = 0;
      const message = (account: string, apiKey: string | null, status: string, createdAt: Date, refused = false) => ({
        id: `msg_${String(++n).padStart(24, '0')}`,
        account_id: account,
        api_key_id: apiKey,
        to: '+14155550123',
        from: 'Dispatch',
        body: 'Hi',
        status,
        encoding: 'GSM-7',
        segments: 1,
        cost: refused ? 0 : 0.01,
        currency: 'USD',
        attempts: refused || status === 'pending' ? 0 : 1,
        created_at: createdAt,
      });
      await db('messages').insert([
        message('acct_a', 'key_limited', 'delivered', times.now),
        message('acct_a', 'key_limited', 'pending', times.now),
        message('acct_a', 'key_limited', 'failed', times.now),
        // Refused at acceptance (a bulk item without a route or an attempt): never counted against a limit.
        message('acct_a', 'key_limited', 'failed', times.now, true),
        message('acct_a', 'key_limited', 'sent', times.month_start),
        message('acct_a', 'key_limited', 'delivered', lastMonth),
        message('acct_a', 'key_monthly', 'undelivered', times.now),
        message('acct_a', 'key_free', 'delivered', times.now),
        message('acct_b', null, 'delivered', times.now),
      ]);
      await applyIt();

      const counts = await db('message_counts').orderBy('account_id').select('account_id', 'stripe', 'pending', 'sent', 'delivered', 'failed', 'undelivered');
      expect(counts).to.deep.equal([
        { account_id: 'acct_a', stripe: 0, pending: 1, sent: 1, delivered: 3, failed: 2, undelivered: 1 },
        { account_id: 'acct_b', stripe: 0, pending: 0, sent: 0, delivered: 1, failed: 0, undelivered: 0 },
      ]);
      const keyCounts = await db('key_send_counts').orderBy(['api_key_id', 'period']).select('api_key_id', 'period', 'count');
      // On the first of a month, the message at its start is today's too.
      const firstOfMonth = times.month_start.getTime() === times.day_start.getTime();
      expect(keyCounts).to.deep.equal([
        { api_key_id: 'key_limited', period: 'day', count: firstOfMonth ? 4 : 3 },
        { api_key_id: 'key_limited', period: 'month', count: 4 },
        { api_key_id: 'key_monthly', period: 'month', count: 1 },
      ]);
    });
  });
});
