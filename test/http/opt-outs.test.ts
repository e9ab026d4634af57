import { expect } from 'chai';
import { optOutChangesOf } from '../../db/opt-outs.ts';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, createTenant, eventually, receivingEndpoint } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const A = '+447911123456';
const B = '+12125550143';
const C = '+447911223344';

const importNumbers = (key: string, body: Record<string, unknown>) => call('POST', '/opt-outs/create', { auth: key, body });
const removeNumber = (key: string, number: string) => call('DELETE', `/opt-outs/${encodeURIComponent(number)}`, { auth: key });

describe('POST /opt-outs/create', () => {
  it('opts numbers out, reporting each in request order: added, unchanged (already, or repeated) and failed (not a number that can exist)', async () => {
    const tenant = await createTenant();
    expect((await importNumbers(tenant.key, { numbers: [B] })).body.data).to.include({ added: 1 });

    const response = await importNumbers(tenant.key, { numbers: [A, B, 'not a number', A, '+44790', C], reason: 'Imported from our previous provider.' });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ object: 'opt_out_import', total: 6, added: 2, unchanged: 2, failed: 2 });
    expect(response.body.data.results.map((result) => [result.number, result.status, result.error?.code ?? null])).to.deep.equal([
      [A, 'added', null],
      [B, 'unchanged', null],
      ['not a number', 'failed', 'number_invalid'],
      [A, 'unchanged', null],
      ['+44790', 'failed', 'number_invalid'],
      [C, 'added', null],
    ]);

    const rows = await harness.db('opt_outs').where({ account_id: tenant.accountId }).orderBy('id');
    expect(rows.map((row) => [row.number, row.source, row.reason])).to.deep.equal([
      [B, 'api', null],
      [A, 'api', 'Imported from our previous provider.'],
      [C, 'api', 'Imported from our previous provider.'],
    ]);
  });

  it('imports 10,000 numbers in one request, and refuses 10,001 with 400 naming numbers, storing nothing', async function () {
    this.timeout(60_000); // 10,000 items validated on the way in and out, on a shared machine
    const tenant = await createTenant();
    const numbers = Array.from({ length: 10_000 }, (_, index) => `+4479112${String(index).padStart(5, '0')}`);
    const tooMany = await importNumbers(tenant.key, { numbers: [...numbers, '+447911300000'] });
    expectError(tooMany, 400, 'parameter_invalid', 'numbers');
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId }).count({ n: '*' })).to.deep.equal([{ n: 0 }]);

    const response = await importNumbers(tenant.key, { numbers });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ total: 10_000, added: 10_000, failed: 0 });
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId }).count({ n: '*' })).to.deep.equal([{ n: 10_000 }]);
  });

  it('emits one recipient.opted_out per number added to webhook endpoints subscribed to it, and lists it under GET /events?type=recipient.opted_out only', async () => {
    const tenant = await createTenant();
    const { receiver } = await receivingEndpoint(tenant, 200);
    const outcomesOnly = await call('POST', '/webhooks/create', {
      auth: tenant.key,
      body: { url: receiver.url, events: ['message.delivered', 'message.failed'] },
    });
    const optOutsOnly = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, events: ['recipient.opted_out'] } });
    expect(optOutsOnly.body.data.events).to.deep.equal(['recipient.opted_out']);
    try {
      await importNumbers(tenant.key, { numbers: [A, A, B], reason: 'Complaint' });
      // Two deliveries each to the endpoint subscribed to every type and to the one subscribed to opt-outs.
      const received = await eventually(
        () => receiver.received.filter((delivery) => delivery.event.type === 'recipient.opted_out'),
        (list) => list.length === 4,
        { what: 'four recipient.opted_out deliveries' },
      );
      // Deliveries are created with their events, in the same transaction: none exists for the other endpoint.
      expect(await harness.db('webhook_deliveries').where({ endpoint_id: outcomesOnly.body.data.id })).to.deep.equal([]);
      expect(await harness.db('webhook_deliveries').where({ endpoint_id: optOutsOnly.body.data.id })).to.have.length(2);
      expect(received.map((delivery) => delivery.event.data.number)).to.have.members([A, B, A, B]);
      expect(received[0].event.data).to.include({ object: 'opt_out', source: 'api', reason: 'Complaint', keyword: null });
      expect(received[0].headers['dispatch-signature']).to.match(/^t=\d+,v1=[0-9a-f]{64}$/);

      const listed = await call('GET', '/events?type=recipient.opted_out', { auth: tenant.key });
      expect(listed.body.data.map((event) => ('number' in event.data ? event.data.number : undefined))).to.have.members([A, B]);
      expect((await call('GET', '/events?type=*', { auth: tenant.key })).body.pagination.total).to.equal(2);
      // A v1 client that names no type keeps reading only the message events its enum knows.
      expect((await call('GET', '/events', { auth: tenant.key })).body.pagination.total).to.equal(0);
    } finally {
      await receiver.stop();
    }
  });

  it('answers 400 to an empty list and to an unknown field, and 403 to a key without sms:send', async () => {
    const tenant = await createTenant();
    expectError(await importNumbers(tenant.key, { numbers: [] }), 400, 'parameter_invalid', 'numbers');
    expectError(await importNumbers(tenant.key, { numbers: [A], source: 'keyword' }), 400, 'parameter_unknown', 'source');
    const reader = await createAdminKey(tenant.accountId, { name: 'Reader', permissions: ['sms:read'] });
    expectError(await importNumbers(reader.plain_key, { numbers: [A] }), 403, 'forbidden');
  });
});

describe('GET /opt-outs', () => {
  it("lists the account's opt-outs newest first, filters by number, and never shows another account's", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    await importNumbers(tenant.key, { numbers: [A] });
    await importNumbers(tenant.key, { numbers: [B] });
    await importNumbers(other.key, { numbers: [C] });

    const all = await call('GET', '/opt-outs?limit=1', { auth: tenant.key });
    expect(all.status).to.equal(200);
    expect(all.body.data.map((row) => row.number)).to.deep.equal([B]);
    expect(all.body.pagination).to.deep.equal({ page: 1, limit: 1, total: 2, pages: 2, has_more: true });
    expect(all.body.data[0]).to.deep.include({ object: 'opt_out', source: 'api', reason: null, keyword: null });

    const one = await call('GET', `/opt-outs?number=${encodeURIComponent(A)}`, { auth: tenant.key });
    expect(one.body.data.map((row) => row.number)).to.deep.equal([A]);
    expect((await call('GET', `/opt-outs?number=${encodeURIComponent(C)}`, { auth: tenant.key })).body.data).to.deep.equal([]);
    expectError(await call('GET', '/opt-outs?number=0740012345', { auth: tenant.key }), 400, 'parameter_invalid', 'number');
  });
});

describe('DELETE /opt-outs/{number}', () => {
  it('lifts an opt-out of any source, emits recipient.opted_in, and records both changes with their source and time', async () => {
    const tenant = await createTenant();
    await importNumbers(tenant.key, { numbers: [A] });
    const removed = await removeNumber(tenant.key, A);
    expect(removed.status).to.equal(200);
    expect(removed.body.data).to.deep.equal({ id: A, object: 'opt_out', deleted: true });
    expect((await call('GET', '/opt-outs', { auth: tenant.key })).body.data).to.deep.equal([]);

    const history = await optOutChangesOf(harness.db, tenant.accountId, A);
    expect(history.map((change) => [change.change, change.source])).to.deep.equal([
      ['opt_out', 'api'],
      ['opt_in', 'api'],
    ]);
    expect(history[1].created_at.getTime()).to.be.at.least(history[0].created_at.getTime());
    const events = await call('GET', '/events?type=recipient.opted_in', { auth: tenant.key });
    expect(events.body.data.map((event) => [event.type, 'number' in event.data ? event.data.number : undefined])).to.deep.equal([['recipient.opted_in', A]]);
  });

  it("answers 404 for a number that is not opted out, or is another account's, and 400 for one that is not E.164", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    await importNumbers(other.key, { numbers: [A] });
    expectError(await removeNumber(tenant.key, A), 404, 'resource_not_found');
    expect(await harness.db('opt_outs').where({ account_id: other.accountId, number: A })).to.have.length(1);
    expectError(await call('DELETE', '/opt-outs/07911123456', { auth: tenant.key }), 400, 'parameter_invalid', 'number');
  });
});

describe('GET /keywords and POST /keywords/update', () => {
  it('answers the defaults until the account changes them, then its own keywords and texts; null restores a default text', async () => {
    const tenant = await createTenant();
    const initial = await call('GET', '/keywords', { auth: tenant.key });
    expect(initial.status).to.equal(200);
    expect(initial.body.data.opt_out).to.deep.include({ keywords: [], reply_is_default: true });
    expect(initial.body.data.opt_out.default_keywords).to.include.members(['STOP', 'ARRET', 'OPT-OUT']);
    expect(initial.body.data.updated_at).to.equal(null);

    const changed = await call('POST', '/keywords/update', {
      auth: tenant.key,
      body: { opt_out: { keywords: ['halt', 'Halt'] }, help: { reply: 'Acme alerts. Reply STOP to end.' } },
    });
    expect(changed.status).to.equal(200);
    expect(changed.body.data.opt_out).to.deep.include({ keywords: ['HALT'], reply_is_default: true });
    expect(changed.body.data.help).to.deep.include({ keywords: [], reply: 'Acme alerts. Reply STOP to end.', reply_is_default: false });
    expect(changed.body.data.updated_at).to.be.a('string');

    const restored = await call('POST', '/keywords/update', { auth: tenant.key, body: { help: { reply: null } } });
    expect(restored.body.data.help.reply_is_default).to.equal(true);
    expect(restored.body.data.opt_out.keywords).to.deep.equal(['HALT']);
    expect((await call('GET', '/keywords', { auth: tenant.key })).body.data).to.deep.equal(restored.body.data);
    expectError(await call('GET', '/keywords?kind=help', { auth: tenant.key }), 400, 'parameter_unknown', 'kind');
  });

  it('refuses a keyword already in another list (defaults included) with 400 keyword_conflict, and one ending in punctuation, changing nothing', async () => {
    const tenant = await createTenant();
    expectError(await call('POST', '/keywords/update', { auth: tenant.key, body: { help: { keywords: ['stop'] } } }), 400, 'keyword_conflict', 'help.keywords');
    expectError(
      await call('POST', '/keywords/update', { auth: tenant.key, body: { opt_out: { keywords: ['HALT'] }, opt_in: { keywords: ['halt'] } } }),
      400,
      'keyword_conflict',
    );
    expectError(
      await call('POST', '/keywords/update', { auth: tenant.key, body: { opt_out: { keywords: ['HALT!'] } } }),
      400,
      'parameter_invalid',
      'opt_out.keywords',
    );
    expectError(
      await call('POST', '/keywords/update', { auth: tenant.key, body: { opt_out: { keywords: ['two words'] } } }),
      400,
      'parameter_invalid',
      'opt_out.keywords',
    );
    expectError(await call('POST', '/keywords/update', { auth: tenant.key, body: {} }), 400, 'parameter_invalid');
    expect(await harness.db('keyword_settings').where({ account_id: tenant.accountId })).to.deep.equal([]);
  });
});

describe('GET /admin/opt-outs', () => {
  it("lists every account's opt-outs with their account, filtered by account_id and number", async () => {
    const first = await createTenant();
    const second = await createTenant();
    await importNumbers(first.key, { numbers: [A, B] });
    await importNumbers(second.key, { numbers: [A] });

    const byNumber = await call('GET', `/admin/opt-outs?number=${encodeURIComponent(A)}&limit=100`, { auth: 'admin' });
    expect(byNumber.status).to.equal(200);
    const mine = byNumber.body.data.filter((row) => [first.accountId, second.accountId].includes(row.account_id));
    expect(mine.map((row) => row.account_id)).to.have.members([first.accountId, second.accountId]);

    const byAccount = await call('GET', `/admin/opt-outs?account_id=${first.accountId}`, { auth: 'admin' });
    expect(byAccount.body.data.map((row) => [row.account_id, row.number])).to.deep.equal([
      [first.accountId, B],
      [first.accountId, A],
    ]);
    expect((await call('GET', '/admin/opt-outs?account_id=acct_unknown', { auth: 'admin' })).body.data).to.deep.equal([]);
    expect((await call('GET', '/admin/opt-outs', { auth: first.key })).status).to.equal(401);
  });
});
