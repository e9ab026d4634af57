import { expect } from 'chai';
import { ledgerSum } from '../../db/ledger.ts';
import { call, expectError } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { approvedSender, eventually, sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';
const MINUTE = 60_000;

const balanceOf = async (tenant: Tenant) => (await harness.db('accounts').where({ id: tenant.accountId }).first('balance')).balance as string;
const attemptsOf = async (id: string) => harness.db('message_attempts').where({ message_id: id }).count({ n: '*' }).first();
const send = (tenant: Tenant, body: Record<string, unknown>) =>
  call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi', ...body } });

/**
 * The service's clock set `aheadMs` before the real time: a message it schedules 61 seconds
 * ahead is due `61 s - aheadMs` from now by the database's clock, which starts its send job.
 */
const clockBehindBy = (aheadMs: number) => harness.clock.set(new Date(Date.now() - aheadMs));

describe('scheduled sends (send_at)', function () {
  this.timeout(30_000);

  it('refuses a send_at in the past, under 60 s ahead, over 90 days ahead, or without a zone, naming send_at, and stores nothing', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-05-20T12:00:00Z'));
    for (const sendAt of ['2031-05-20T11:59:00Z', '2031-05-20T12:00:59Z', '2031-08-18T12:00:01Z', '2031-05-20T13:00:00']) {
      expectError(await send(tenant, { send_at: sendAt }), 400, 'parameter_invalid', 'send_at');
    }
    expect(await harness.db('messages').where({ account_id: tenant.accountId }).count({ n: '*' }).first()).to.deep.equal({ n: 0 });
    expect(await balanceOf(tenant)).to.equal('10.0000');
  });

  it('accepts, charges and shows a scheduled message as pending with send_at, and starts its send job at send_at', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-05-20T12:00:00Z'));
    const scheduled = await send(tenant, { send_at: '2031-05-20T14:00:00+01:00', validity_period: 600 });
    expect(scheduled.status).to.equal(201);
    expect(scheduled.body.data).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z', validity_period: 600, bulk_id: null, cost: 0.01 });
    expect(await balanceOf(tenant)).to.equal('9.9900');
    const jobs = await harness.db('pgboss.job').whereRaw("data->'message_ids' \\? ?", [scheduled.body.data.id]).select('start_after');
    expect(jobs.map((job) => new Date(job.start_after).toISOString())).to.deep.equal(['2031-05-20T13:00:00.000Z']);
    // Waiting, never submitted.
    expect(await attemptsOf(scheduled.body.data.id)).to.deep.equal({ n: 0 });
  });

  it('submits a scheduled message once its send_at has come', async () => {
    const tenant = await sendingTenant();
    clockBehindBy(2 * MINUTE);
    const scheduled = await send(tenant, { send_at: new Date(harness.clock.now().getTime() + MINUTE + 1000).toISOString() });
    expect(scheduled.status).to.equal(201);
    const sent = await waitForMessage(tenant, scheduled.body.data.id, (message) => message.status === 'delivered');
    expect(Date.parse(sent.sent_at!)).to.be.at.least(Date.parse(sent.send_at!));
  });

  it('lists the scheduled messages with scheduled=true, send_after and send_before', async () => {
    const tenant = await sendingTenant();
    harness.clock.set(new Date('2031-05-20T12:00:00Z'));
    const at = async (sendAt?: string) => (await send(tenant, sendAt ? { send_at: sendAt } : {})).body.data.id;
    const nine = await at('2031-05-21T09:00:00Z');
    const ten = await at('2031-05-21T10:00:00Z');
    await at();
    const list = async (query: string) =>
      (await call('GET', `/messages?${query}`, { auth: tenant.key })).body.data.map((message: { id: string }) => message.id);
    expect(await list('scheduled=true')).to.deep.equal([ten, nine]);
    expect(await list('scheduled=true&send_after=2031-05-21T09:00:00Z')).to.deep.equal([ten]);
    expect(await list('send_before=2031-05-21T10:00:00Z')).to.deep.equal([nine]);
  });
});

describe('POST /messages/{id}/cancel', function () {
  this.timeout(60_000);

  it('cancels a scheduled message: failed with canceled, refunded, message.failed, and a repeat answers the same', async () => {
    const tenant = await sendingTenant();
    const scheduled = await send(tenant, { send_at: new Date(Date.now() + 3_600_000).toISOString() });
    const id = scheduled.body.data.id;
    const canceled = await call('POST', `/messages/${id}/cancel`, { auth: tenant.key });
    expect(canceled.status).to.equal(200);
    expect(canceled.body.data).to.include({ id, status: 'failed', cost: 0 });
    expect(canceled.body.data.error).to.include({ type: 'invalid_request_error', code: 'canceled' });
    expect(await balanceOf(tenant)).to.equal('10.0000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('10.0000');
    expect(await harness.db('events').where({ message_id: id }).orderBy('created_at').pluck('type')).to.deep.equal(['message.failed']);
    const again = await call('POST', `/messages/${id}/cancel`, { auth: tenant.key });
    expect(again.status).to.equal(200);
    expect(again.body.data).to.deep.equal(canceled.body.data);
    expect(await harness.db('events').where({ message_id: id }).count({ n: '*' }).first()).to.deep.equal({ n: 1 });
    expect(await attemptsOf(id)).to.deep.equal({ n: 0 });
  });

  it('answers 409 message_not_cancelable for a message handed to an upstream, and 404 for an unknown or foreign one', async () => {
    const tenant = await sendingTenant();
    const other = await sendingTenant();
    const sent = await send(tenant, {});
    await waitForMessage(tenant, sent.body.data.id, (message) => message.status !== 'pending');
    expectError(await call('POST', `/messages/${sent.body.data.id}/cancel`, { auth: tenant.key }), 409, 'message_not_cancelable', 'id');
    expectError(await call('POST', `/messages/${sent.body.data.id}/cancel`, { auth: other.key }), 404, 'resource_not_found', 'id');
    expectError(await call('POST', '/messages/msg_000000000000000000000000/cancel', { auth: tenant.key }), 404, 'resource_not_found', 'id');
  });

  it('decides each of 100 cancels racing the sending moment one way: canceled and never submitted, or submitted and 409', async () => {
    const upstream = await FakeHttpProvider.start();
    try {
      const tenant = await sendingTenant({ balance: 5, routes: [{ provider: 'http', config: { url: upstream.url }, price: 0.01 }] });
      // Due at once by the database's clock: the send jobs start while the cancels arrive.
      clockBehindBy(2 * MINUTE);
      const sendAt = new Date(harness.clock.now().getTime() + MINUTE).toISOString();
      const bulk = await call('POST', '/messages/bulk', {
        auth: tenant.key,
        body: { from: 'Dispatch', body: 'Race', send_at: sendAt, recipients: Array.from({ length: 100 }, (_, i) => `+1415555${String(1000 + i)}`) },
      });
      expect(bulk.body.data).to.include({ sent: 100, failed: 0 });
      const ids: string[] = bulk.body.data.messages.map((message: { id: string }) => message.id);
      const answers = await Promise.all(ids.map((id) => call('POST', `/messages/${id}/cancel`, { auth: tenant.key })));
      expect(answers.every((answer) => answer.status === 200 || answer.status === 409)).to.equal(true);
      const settled = await eventually(
        () => harness.db('messages').whereIn('id', ids).select('id', 'status', 'error'),
        (rows) => rows.every((row) => row.status !== 'pending'),
        { what: 'every raced message settled', timeoutMs: 30_000 },
      );
      const submitted = new Set(upstream.requests.map((request) => request.body.message_id));
      for (const [index, id] of ids.entries()) {
        const row = settled.find((message) => message.id === id)!;
        if (answers[index].status === 200) {
          expect(row).to.deep.include({ status: 'failed' });
          expect(row.error.code).to.equal('canceled');
          expect(submitted.has(id), `${id} was canceled and submitted`).to.equal(false);
          expect(await attemptsOf(id)).to.deep.equal({ n: 0 });
        } else {
          expect(submitted.has(id), `${id} answered 409 but was never submitted`).to.equal(true);
          expect(row.error?.code).to.not.equal('canceled');
        }
      }
      expect(await ledgerSum(harness.db, tenant.accountId)).to.equal(await balanceOf(tenant));
      const canceledCount = answers.filter((answer) => answer.status === 200).length;
      expect(await balanceOf(tenant)).to.equal((5 - (100 - canceledCount) * 0.01).toFixed(4));
    } finally {
      await upstream.stop();
    }
  });
});

describe('POST /messages/bulk/{bulk_id}/cancel', () => {
  it("cancels a scheduled bulk's messages, counts those failed at acceptance as not cancelable, and answers the same when repeated", async () => {
    const tenant = await sendingTenant();
    const bulk = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { from: 'Dispatch', body: 'Later', send_at: new Date(Date.now() + 3_600_000).toISOString(), recipients: [TO, '+14155550124', 'bogus'] },
    });
    expect(bulk.status).to.equal(201);
    const bulkId = bulk.body.data.bulk_id;
    expect(bulk.body.data.messages.map((message) => message.bulk_id)).to.deep.equal([bulkId, bulkId, bulkId]);
    const first = await call('POST', `/messages/bulk/${bulkId}/cancel`, { auth: tenant.key });
    expect(first.status).to.equal(200);
    expect(first.body.data).to.deep.equal({ object: 'bulk_cancel', bulk_id: bulkId, canceled: 2, not_cancelable: 1 });
    expect((await call('POST', `/messages/bulk/${bulkId}/cancel`, { auth: tenant.key })).body.data).to.deep.equal(first.body.data);
    expect(await balanceOf(tenant)).to.equal('10.0000');
    const other = await sendingTenant();
    expectError(await call('POST', `/messages/bulk/${bulkId}/cancel`, { auth: other.key }), 404, 'resource_not_found', 'bulk_id');
  });
});

describe('a scheduled message checked again when it goes', function () {
  this.timeout(60_000);

  it('fails, refunded, when its number opted out, was blocklisted or its sender was suspended after acceptance', async () => {
    const tenant = await sendingTenant();
    await approvedSender(tenant, 'Other');
    const suspended = await harness.db('senders').where({ account_id: tenant.accountId, sender_id: 'Other' }).first('id');
    // Due 15 seconds from now by the database's clock: time enough to change the checks first.
    clockBehindBy(MINUTE - 15_000);
    const sendAt = new Date(harness.clock.now().getTime() + MINUTE).toISOString();
    const optedOut = await send(tenant, { to: '+14155550131', send_at: sendAt });
    const blocked = await send(tenant, { to: '+14155550132', send_at: sendAt });
    const fromSuspended = await send(tenant, { to: '+14155550133', from: 'Other', send_at: sendAt });
    const untouched = await send(tenant, { to: '+14155550134', send_at: sendAt });
    expect(await balanceOf(tenant)).to.equal('9.9600');
    expect((await call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers: ['+14155550131'] } })).status).to.equal(200);
    expect((await call('POST', '/admin/blocklist', { auth: 'admin', body: { number: '+14155550132', account_id: tenant.accountId } })).status).to.equal(201);
    expect((await call('POST', `/admin/senders/${suspended.id}/suspend`, { auth: 'admin' })).status).to.equal(200);

    // Watched in the database: polling the API for 15 s would meet the key's rate limit.
    const ids = [optedOut, blocked, fromSuspended, untouched].map((response) => response.body.data.id);
    await eventually(
      () => harness.db('messages').whereIn('id', ids).where({ status: 'pending' }).count({ n: '*' }).first(),
      (row) => Number(row?.n) === 0,
      { what: 'the scheduled messages settled', timeoutMs: 40_000 },
    );
    const final = async (response: { body: { data: { id: string } } }) =>
      (await call('GET', `/messages/${response.body.data.id}`, { auth: tenant.key })).body.data;
    expect((await final(optedOut)).error).to.include({ code: 'recipient_opted_out' });
    expect((await final(blocked)).error).to.include({ code: 'recipient_blocklisted' });
    expect((await final(fromSuspended)).error).to.include({ code: 'sender_not_approved' });
    expect((await final(untouched)).status).to.be.oneOf(['sent', 'delivered']);
    for (const refused of [optedOut, blocked, fromSuspended]) expect(await attemptsOf(refused.body.data.id)).to.deep.equal({ n: 0 });
    expect(await balanceOf(tenant)).to.equal('9.9900');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('9.9900');
  });
});

describe('validity_period', function () {
  this.timeout(60_000);

  it('ends a message no upstream took within its validity expired, refunded, with no submit after its deadline', async () => {
    const upstream = await FakeHttpProvider.start();
    try {
      upstream.behave({ status: 503 });
      const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: upstream.url }, price: 0.01 }] });
      const accepted = await send(tenant, { validity_period: 5 });
      const failed = await waitForMessage(tenant, accepted.body.data.id, (message) => message.status !== 'pending', 40_000);
      expect(failed).to.include({ status: 'failed', cost: 0 });
      expect(failed.error).to.include({ type: 'provider_error', code: 'expired' });
      const deadline = Date.parse(failed.created_at) + 5_000;
      expect(upstream.requests.length).to.be.at.least(1);
      for (const request of upstream.requests) {
        expect(request.receivedAt).to.be.below(deadline + 1_000);
        expect(request.body.validity_period).to.be.within(1, 5);
      }
      const attempts = await harness.db('message_attempts').where({ message_id: accepted.body.data.id }).pluck('created_at');
      for (const at of attempts) expect(new Date(at).getTime()).to.be.below(deadline);
      expect(await balanceOf(tenant)).to.equal('10.0000');
    } finally {
      await upstream.stop();
    }
  });

  it("ends a message undelivered with expired when the carrier's report says it expired", async () => {
    const upstream = await FakeHttpProvider.start();
    try {
      const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: upstream.url }, price: 0.01 }] });
      const accepted = await send(tenant, { validity_period: 600 });
      const sent = await waitForMessage(tenant, accepted.body.data.id, (message) => message.status === 'sent');
      // What is left of the 600 s when it was submitted.
      expect(upstream.requests[0].body.validity_period).to.be.above(0).and.at.most(600);
      const report = await upstream.postReport(upstream.requests[0].body.dlr_url, { id: sent.provider_message_id, status: 'expired' });
      expect(report.status).to.equal(200);
      const expired = await waitForMessage(tenant, sent.id, (message) => message.status === 'undelivered');
      expect(expired.error).to.include({ type: 'provider_error', code: 'expired' });
    } finally {
      await upstream.stop();
    }
  });
});
