import { expect } from 'chai';
import { moveMessageStatus } from '../../db/messages.ts';
import { messageStats } from '../../domain/stats.ts';
import { createTenant, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/** Messages of `tenant` in `country`, each delivered the given number of ms after it was accepted. */
async function delivered(tenant: Tenant, country: 'US' | 'GB', latenciesMs: number[]): Promise<void> {
  const ids = await storeMessages(
    tenant,
    latenciesMs.map(() => ({ status: 'pending' as const, country, to: country === 'GB' ? '+447400123456' : '+12127000042' })),
  );
  for (const [index, id] of ids.entries()) {
    const { created_at: createdAt } = await harness.db('messages').where({ id }).first('created_at');
    await moveMessageStatus(harness.db, id, 'pending', 'delivered', { delivered_at: new Date(createdAt.getTime() + latenciesMs[index]) });
  }
}

describe('message statistics', () => {
  it("interpolate each group's latency quantiles, and the totals' from the merged histogram, within the buckets", async () => {
    const tenant = await createTenant();
    // US: one in bucket 0 ([0, 50 ms)), three in bucket 11 ([1,600, 2,262.7 ms)), one in bucket 12 ([2,262.7, 3,200 ms)); GB: one in bucket 11.
    await delivered(tenant, 'US', [10, 2000, 2000, 2000, 2700]);
    await delivered(tenant, 'GB', [2000]);
    const stats = await messageStats(harness.db, { accountId: tenant.accountId, groupBy: 'country' });
    expect(stats.groups.map((group) => [group.country, group.byStatus.delivered, group.latencyMs.p50, group.latencyMs.p95])).to.deep.equal([
      // GB: ranks 0.5 and 0.95 of the one message in bucket 11.
      ['GB', 1, 1931, 2230],
      // US: rank 2.5 is the second of bucket 11's three (1,600 + 662.7 * 1.5 / 3); rank 4.75 lies in bucket 12 (2,262.7 + 937.3 * 0.75).
      ['US', 5, 1931, 2966],
    ]);
    // Both: rank 3 is the second of bucket 11's four, rank 5.7 in bucket 12 (2,262.7 + 937.3 * 0.7).
    expect(stats.totals.latencyMs).to.deep.equal({ p50: 1931, p95: 2919 });
  });

  it('list failures by code, most frequent first, and add up cost, without groups when nothing is grouped', async () => {
    const tenant = await createTenant();
    const ids = await storeMessages(tenant, [
      { status: 'pending', cost: '0.0100' },
      { status: 'pending', cost: '0.0100' },
      { status: 'pending', cost: '0.0100' },
      { status: 'pending', cost: '0.0125' },
    ]);
    const fail = (id: string, code: string) =>
      moveMessageStatus(harness.db, id, 'pending', 'failed', { cost: '0.0000', error: { type: 'provider_error', code, message: 'No' } });
    await fail(ids[0], 'blocked');
    await fail(ids[1], 'provider_rejected');
    await fail(ids[2], 'provider_rejected');
    const stats = await messageStats(harness.db, { accountId: tenant.accountId });
    expect(stats.groups).to.deep.equal([]);
    expect(stats.totals).to.deep.equal({
      messages: 4,
      byStatus: { pending: 1, sent: 0, delivered: 0, failed: 3, undelivered: 0 },
      deliveryRate: 0,
      failures: [
        { code: 'provider_rejected', count: 2 },
        { code: 'blocked', count: 1 },
      ],
      cost: '0.0125',
      latencyMs: { p50: null, p95: null },
      // Stored, never offered to a route.
      submits: { accepted: 0, rejected: 0, retryable: 0, unknown: 0 },
      submitSuccessRate: null,
    });
  });
});
