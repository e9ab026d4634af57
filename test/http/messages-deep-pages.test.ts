import { expect } from 'chai';
import type { Knex } from 'knex';
import { insertMessages, moveMessageStatus, type MessageStatus, type NewMessage } from '../../db/messages.ts';
import { call } from '../support/client.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const HOUR = 3_600_000;

/**
 * Messages stored as a send stores them (insertMessages keeps the counts and the hourly
 * counters): `count` of them over the 40 hours before this one, unevenly (three hours hold
 * none, one holds a third of them), eight in ten delivered and the rest of the other statuses
 * in turn; several share a created_at, so that the id breaks ties.
 */
async function seed(db: Knex, accountId: string, count: number): Promise<void> {
  const start = Math.floor(Date.now() / HOUR) * HOUR - 40 * HOUR;
  const rows = [];
  for (let g = 1; g <= count; g++) {
    if ([5, 6, 21].includes(g % 40)) continue;
    const at = g % 3 === 0 ? start + 17.5 * HOUR : start + (g % 40) * HOUR + (g % 7) * 60_000;
    rows.push({
      id: `msg_deep${String(g).padStart(6, '0')}${accountId.slice(-14)}`,
      account_id: accountId,
      api_key_id: null,
      to: '+12127000042',
      from: 'Dispatch',
      body: 'Hi',
      status: (g % 10 < 8 ? 'delivered' : ['pending', 'sent', 'failed', 'undelivered'][g % 4]) as MessageStatus,
      encoding: 'GSM-7',
      segments: 1,
      cost: '0.0100',
      currency: 'USD',
      route_id: null,
      requested_route_id: null,
      error: null,
      reference: null,
      created_at: new Date(at),
    });
  }
  await insertMessages(db, rows as NewMessage[]);
}

/** What the page must be: the plain walk of the account's messages, newest first. */
async function expectedPage(db: Knex, accountId: string, status: string | undefined, page: number, limit: number) {
  const query = db('messages')
    .where({ account_id: accountId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
  if (status) query.andWhere({ status });
  const total = Number((await query.clone().clearOrder().count({ n: '*' }))[0].n);
  const ids = (await query
    .offset((page - 1) * limit)
    .limit(limit)
    .pluck('id')) as string[];
  return { ids, total };
}

async function expectSamePage(tenant: Tenant, status: string | undefined, page: number, limit: number): Promise<void> {
  const filter = status ? `&status=${status}` : '';
  const response = await call('GET', `/messages?page=${page}&limit=${limit}${filter}`, { auth: tenant.key });
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  const expected = await expectedPage(harness.db, tenant.accountId, status, page, limit);
  expect(
    response.body.data.map((message: { id: string }) => message.id),
    `page ${page} of ${limit}, ${status ?? 'every status'}`,
  ).to.deep.equal(expected.ids);
  expect(response.body.pagination.total).to.equal(expected.total);
}

describe('GET /messages deep pages (from 10,000 rows on, started from the hour of their first row)', function () {
  this.timeout(60_000);
  let tenant: Tenant;
  let other: Tenant;

  before(async () => {
    tenant = await createTenant();
    other = await createTenant();
    await seed(harness.db, tenant.accountId, 16_000);
    // Another account's messages in the same hours count for neither the pages nor the hours.
    await seed(harness.db, other.accountId, 12_000);
  });

  it('answers the same rows as a walk of every newer message, on every status and on one', async () => {
    for (const [page, limit] of [
      [201, 50],
      [230, 50],
      [264, 50],
      [101, 100],
      [120, 100],
    ])
      await expectSamePage(tenant, undefined, page, limit);
    for (const [page, limit] of [
      [1001, 10],
      [1100, 10],
      [1180, 10],
    ])
      await expectSamePage(tenant, 'delivered', page, limit);
  });

  it('starts a page on the first row of an hour, and on the last row of the hour after it', async () => {
    const { rows } = await harness.db.raw(
      `SELECT sum(count(*)) OVER (ORDER BY date_trunc('hour', created_at AT TIME ZONE 'UTC') DESC)::int AS through
       FROM messages WHERE account_id = ? GROUP BY date_trunc('hour', created_at AT TIME ZONE 'UTC') ORDER BY 1`,
      [tenant.accountId],
    );
    const boundary = (rows as { through: number }[]).map((row) => row.through).find((through) => through >= 10_500 && through < 14_000) as number;
    expect(boundary, 'an hour that ends between rows 10,500 and 14,000').to.be.a('number');
    // With a limit of 1, page N + 1 starts at offset N.
    for (const offset of [boundary - 1, boundary, boundary + 1]) await expectSamePage(tenant, undefined, offset + 1, 1);
  });

  it('answers an empty page past the last row, with the exact total', async () => {
    await expectSamePage(tenant, undefined, 400, 50);
    await expectSamePage(tenant, 'delivered', 300, 50);
  });

  it('follows a status change: the message leaves its status page and its hour count at once', async () => {
    const [moved] = (await expectedPage(harness.db, tenant.accountId, 'delivered', 1001, 10)).ids;
    expect(await moveMessageStatus(harness.db, moved, 'delivered', 'undelivered', {})).to.have.property('id', moved);
    await expectSamePage(tenant, 'delivered', 1001, 10);
    await expectSamePage(tenant, undefined, 1001, 10);
  });
});
