import { expect } from 'chai';
import type { Knex } from 'knex';
import { connect } from '../../db/connection.ts';
import { insertMessages, moveMessageStatus, type MessageStatus, type NewMessage } from '../../db/messages.ts';
import { newId } from '../../domain/ids.ts';
import { call, expectError } from '../support/client.ts';
import { createTenant, eventually, sendingTenant, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

async function store(tenant: Tenant, to: string, status: 'delivered' | 'failed', createdAt: string): Promise<string> {
  const error = status === 'failed' ? { type: 'provider_error' as const, code: 'provider_rejected', message: 'Rejected' } : null;
  const [id] = await storeMessages(tenant, [{ to, status, error, reference: 'order-1', created_at: createdAt }]);
  return id;
}

describe('GET /messages', () => {
  it('filters by status, recipient and creation time, newest first', async () => {
    const tenant = await createTenant();
    const a = await store(tenant, '+447700900001', 'delivered', '2026-01-01T00:00:00Z');
    const b = await store(tenant, '+447700900002', 'failed', '2026-02-01T00:00:00Z');
    const c = await store(tenant, '+447700900001', 'delivered', '2026-03-01T00:00:00Z');
    const ids = async (query: string) => (await call('GET', `/messages${query}`, { auth: tenant.key })).body.data.map((m: { id: string }) => m.id);
    expect(await ids('')).to.deep.equal([c, b, a]);
    expect(await ids('?status=delivered')).to.deep.equal([c, a]);
    expect(await ids('?to=%2B447700900001')).to.deep.equal([c, a]);
    expect(await ids('?created_after=2026-01-01T00:00:00Z')).to.deep.equal([c, b]);
    expect(await ids('?created_before=2026-03-01T00:00:00Z')).to.deep.equal([b, a]);
    expect(await ids('?limit=1&page=2')).to.deep.equal([b]);
  });

  it('keeps pagination.total exact through sends, bulk partial failures, refusals, deliveries and failures, for every filter', async () => {
    const tenant = await sendingTenant({
      balance: 0.05,
      routes: [
        { prefixes: ['+1'], price: 0.01, config: { outcome: 'delivered', dlr_delay_ms: 20 } },
        { prefixes: ['+44'], price: 0.01, config: { outcome: 'rejected' } },
      ],
    });
    const send = (to: string) => call('POST', '/messages/send', { auth: tenant.key, body: { to, from: 'Dispatch', body: 'Hi' } });
    // Five covered, two past the balance and one malformed: eight stored, three failed at acceptance.
    const bulk = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: {
        from: 'Dispatch',
        body: 'Hi',
        recipients: ['+14155550101', '+14155550102', 'bogus', '+14155550103', '+14155550104', '+14155550105', '+14155550106', '+14155550107'],
      },
    });
    expect(bulk.body.data).to.include({ total: 8, sent: 5, failed: 3 });
    // Refused after its message row was written: the transaction's counts go with it.
    expectError(await send('+14155550100'), 402, 'insufficient_balance');
    await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 1 } });
    // The database's clock stamps created_at.
    const later = ((await harness.db.raw('SELECT clock_timestamp() AS now')).rows[0].now as Date).toISOString();
    for (const to of ['+14155550100', '+14155550100', '+447400123456']) expect((await send(to)).status).to.equal(201);
    await eventually(
      () => harness.db('messages').where({ account_id: tenant.accountId }).whereIn('status', ['pending', 'sent']).count({ n: '*' }),
      ([{ n }]) => Number(n) === 0,
      { what: 'every message final' },
    );

    const expected: [string, (query: Knex.QueryBuilder) => unknown, number][] = [
      ['', () => {}, 11],
      ['?status=delivered', (q) => q.where({ status: 'delivered' }), 7],
      ['?status=failed', (q) => q.where({ status: 'failed' }), 4],
      ['?status=pending', (q) => q.where({ status: 'pending' }), 0],
      ['?status=sent', (q) => q.where({ status: 'sent' }), 0],
      ['?status=undelivered', (q) => q.where({ status: 'undelivered' }), 0],
      ['?to=%2B14155550100', (q) => q.where({ to: '+14155550100' }), 2],
      ['?to=%2B14155550100&status=failed', (q) => q.where({ to: '+14155550100', status: 'failed' }), 0],
      [`?created_after=${later}`, (q) => q.where('created_at', '>', later), 3],
      [`?created_after=${later}&status=failed`, (q) => q.where('created_at', '>', later).where({ status: 'failed' }), 1],
      [`?created_before=${later}&status=failed`, (q) => q.where('created_at', '<', later).where({ status: 'failed' }), 3],
    ];
    for (const [query, filter, total] of expected) {
      const counting = harness.db('messages').where({ account_id: tenant.accountId });
      filter(counting);
      const [{ n }] = await counting.count({ n: '*' });
      const response = await call('GET', `/messages${query}${query ? '&' : '?'}limit=100`, { auth: tenant.key });
      expect([response.body.pagination.total, response.body.data.length, Number(n)], `GET /messages${query}`).to.deep.equal([total, total, total]);
    }
  });

  it('keeps totals exact under concurrent sends, bulks, deliveries and refunds of one account', async () => {
    const tenant = await sendingTenant({
      balance: 100,
      routes: [
        { prefixes: ['+1'], price: 0.01, config: { outcome: 'delivered', dlr_delay_ms: 10 } },
        { prefixes: ['+44'], price: 0.01, config: { outcome: 'rejected' } },
      ],
    });
    // Refunds lock the balance before they count and sends count before they charge: both at once, on one account.
    const sends = Array.from({ length: 40 }, (_, i) =>
      call('POST', '/messages/send', {
        auth: tenant.key,
        body: { to: i % 2 ? `+1415555${String(1000 + i)}` : `+4474001234${String(10 + i)}`, from: 'Dispatch', body: 'Hi' },
      }),
    );
    const bulks = Array.from({ length: 3 }, () =>
      call('POST', '/messages/bulk', {
        auth: tenant.key,
        body: {
          from: 'Dispatch',
          body: 'Hi',
          recipients: ['bogus', ...Array.from({ length: 30 }, (_, i) => (i % 3 ? `+1415556${String(1000 + i)}` : `+4474005678${String(10 + i)}`))],
        },
      }),
    );
    expect((await Promise.all([...sends, ...bulks])).map((response) => response.status)).to.deep.equal(Array(43).fill(201));
    await eventually(
      () => harness.db('messages').where({ account_id: tenant.accountId }).whereIn('status', ['pending', 'sent']).count({ n: '*' }),
      ([{ n }]) => Number(n) === 0,
      { what: 'every message final', timeoutMs: 30_000 },
    );
    const byStatus = Object.fromEntries(
      (await harness.db('messages').where({ account_id: tenant.accountId }).groupBy('status').select('status', harness.db.raw('count(*)::int AS n'))).map(
        ({ status, n }) => [status, n],
      ),
    );
    expect(byStatus).to.deep.equal({ delivered: 20 + 60, failed: 20 + 3 + 30 });
    for (const status of ['delivered', 'failed', 'pending', 'sent', 'undelivered']) {
      expect((await call('GET', `/messages?status=${status}&limit=1`, { auth: tenant.key })).body.pagination.total, status).to.equal(byStatus[status] ?? 0);
    }
    expect((await call('GET', '/messages?limit=1', { auth: tenant.key })).body.pagination.total).to.equal(133);
  });

  it('pages newest first with the id as tie-break: deep pages hold the rows a full sort puts there, and a page past the end is empty', async () => {
    const tenant = await createTenant();
    const instants = Array.from({ length: 23 }, (_, i) => new Date(Date.UTC(2026, 0, 1, 0, 0, Math.floor(i / 2))).toISOString());
    await storeMessages(
      tenant,
      instants.map((created_at) => ({ created_at })),
    );
    const sorted = await harness
      .db('messages')
      .where({ account_id: tenant.accountId })
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .pluck('id');
    const pages = [];
    for (let page = 1; page <= 6; page++) {
      const response = await call('GET', `/messages?limit=5&page=${page}`, { auth: tenant.key });
      expect(response.body.pagination).to.deep.equal({ page, limit: 5, total: 23, pages: 5, has_more: page < 5 });
      pages.push(response.body.data.map((message: { id: string }) => message.id));
    }
    expect(pages.flat()).to.deep.equal(sorted);
    expect(pages[5]).to.deep.equal([]);
  });

  it('reads a page and its total from one snapshot while messages arrive and move', async () => {
    const tenant = await createTenant();
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        const [id] = await storeMessages(tenant, [{ status: 'sent' }]);
        await moveMessageStatus(harness.db, id, 'sent', 'delivered', { delivered_at: new Date() });
      }
      writing = false;
    })();
    const answers = [];
    while (writing) {
      for (const query of ['?limit=100', '?status=sent&limit=100', '?status=delivered&limit=100']) {
        const { pagination, data } = (await call('GET', `/messages${query}`, { auth: tenant.key })).body;
        answers.push([pagination.total, data.length]);
      }
    }
    await writer;
    expect(answers.filter(([total, length]) => total !== length)).to.deep.equal([]);
    expect(answers.length).to.be.greaterThan(3);
  });

  it('folds the count rows of connections that have closed, keeps those of live ones, and keeps totals exact', async () => {
    const tenant = await createTenant();
    const stored = (status: MessageStatus = 'sent'): NewMessage => ({
      id: newId('msg'),
      account_id: tenant.accountId,
      api_key_id: tenant.keyId,
      to: '+14155550123',
      from: 'Dispatch',
      body: 'Hello',
      status,
      encoding: 'GSM-7',
      segments: 1,
      cost: '0.0075',
      currency: 'USD',
      route_id: null,
      requested_route_id: null,
      error: null,
      reference: null,
    });
    const countRows = async () => Number((await harness.db('message_counts').where({ account_id: tenant.accountId }).count({ n: '*' }))[0].n);
    // Each connection is a backend of its own, and each backend adds to a row of its own.
    const closed: number[] = [];
    for (let i = 0; i < 70; i++) {
      const connection = connect(harness.database.url, 1);
      try {
        await insertMessages(connection, [stored()]);
        closed.push((await connection.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid);
      } finally {
        await connection.destroy();
      }
    }
    expect(await countRows()).to.equal(70);
    await eventually(
      () => harness.db('pg_stat_activity').whereIn('pid', closed).count({ n: '*' }),
      ([{ n }]) => Number(n) === 0,
      { what: 'the closed backends gone' },
    );

    const [idle, open] = [connect(harness.database.url, 1), connect(harness.database.url, 1)];
    try {
      await insertMessages(idle, [stored()]);
      await insertMessages(open, [stored()]);
      await open.transaction(async (trx) => {
        await insertMessages(trx, [stored('failed')]);
        // The read answers while this transaction holds its backend's row, and leaves the rows of live backends be.
        const during = await call('GET', '/messages?limit=1', { auth: tenant.key });
        expect(during.body.pagination.total).to.equal(72);
        expect(await countRows()).to.equal(3);
      });
    } finally {
      await Promise.all([idle.destroy(), open.destroy()]);
    }
    expect((await call('GET', '/messages', { auth: tenant.key })).body.pagination.total).to.equal(73);
    expect((await call('GET', '/messages?status=failed', { auth: tenant.key })).body.pagination.total).to.equal(1);
  });

  it('answers 400 for an invalid filter', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/messages?created_after=yesterday', { auth: tenant.key }), 400, 'parameter_invalid', 'created_after');
    expectError(await call('GET', '/messages?status=lost', { auth: tenant.key }), 400, 'parameter_invalid', 'status');
  });
});

describe('GET /messages/{id}', () => {
  it('answers the message with its error and reference', async () => {
    const tenant = await createTenant();
    const id = await store(tenant, '+447700900003', 'failed', '2026-01-01T00:00:00Z');
    const response = await call('GET', `/messages/${id}`, { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.include({
      id,
      object: 'message',
      status: 'failed',
      cost: 0.0075,
      reference: 'order-1',
      error: { type: 'provider_error', code: 'provider_rejected', message: 'Rejected' },
    });
  });

  it('answers 404 for an unknown message', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/messages/msg_000000000000000000000000', { auth: tenant.key }), 404, 'resource_not_found');
  });
});
