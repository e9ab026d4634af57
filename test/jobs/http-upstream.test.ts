import { expect } from 'chai';
import { ledgerSum } from '../../db/ledger.ts';
import { call } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { eventually, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { routeName, sample, scrape } from '../support/metrics.ts';

const TO = '+14155550123';

describe('sending through an HTTP provider', () => {
  let primary: FakeHttpProvider;
  let backup: FakeHttpProvider;

  beforeEach(async () => {
    primary = await FakeHttpProvider.start();
    backup = await FakeHttpProvider.start();
  });

  afterEach(async () => {
    await primary.stop();
    await backup.stop();
  });

  const httpRoute = (provider: FakeHttpProvider, extra: Record<string, unknown> = {}, price = 0.01) => ({
    provider: 'http' as const,
    config: { url: provider.url, token: 'secret-token', ...extra },
    price,
  });

  it('submits the message with its id as the idempotency key and a per-route delivery-report URL', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    primary.behave({ accept: true, id: 'prov-1' });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hello €' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', provider_message_id: 'prov-1' });
    const request = primary.requests[0];
    expect(request.headers['idempotency-key']).to.equal(sent.id);
    expect(request.headers.authorization).to.equal('Bearer secret-token');
    expect(request.body).to.deep.include({ message_id: sent.id, to: TO, from: 'Dispatch', body: 'Hello €', encoding: 'GSM-7', segments: 1 });
    expect(request.body.dlr_url).to.match(/^http:\/\/127\.0\.0\.1:\d+\/callbacks\/dlr\/[0-9A-Za-z]{32}$/);
  });

  it('fails over from a route answering 503 to a healthy one', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary), httpRoute(backup)] });
    primary.behave({ status: 503 });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', route_id: tenant.routeIds[1], attempts: 2 });
    expect(primary.requests).to.have.length(1);
    expect(backup.requests).to.have.length(1);
  });

  it('fails a message whose route hangs past its timeout with provider_timeout, refunded, and offers it to no other route', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 200 }), httpRoute(backup)] });
    primary.behave({ hang: true });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const failed = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', attempts: 1, cost: 0 });
    expect(failed.error!.code).to.equal('provider_timeout');
    expect(failed.error!.message).to.match(/may still have been sent/);
    expect(backup.requests).to.have.length(0);
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('10.0000');
    const attempts = await harness.db('message_attempts').where({ message_id: failed.id }).select('route_id', 'outcome', 'error_message');
    expect(attempts).to.have.length(1);
    expect(attempts[0]).to.include({ route_id: tenant.routeIds[0], outcome: 'unknown' });
    expect(attempts[0].error_message).to.match(/200 ms/);
  });

  it('applies a report that proves delivered a message failed with provider_timeout: delivered, charged again with a ledger row, message.delivered', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 200 })] });
    primary.behave({ hang: true });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: `Lost answer ${i}` } })).body.data.id);
    for (const id of ids) expect((await waitForMessage(tenant, id, (m) => m.status !== 'pending')).error!.code).to.equal('provider_timeout');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('10.0000');
    const dlrUrl = primary.requests[0].body.dlr_url;

    // Named by the message_id it was sent, by the provider's id when that is Dispatch's, and one reported undelivered.
    expect((await primary.postReport(dlrUrl, { id: 'up-late-1', message_id: ids[0], status: 'delivered' })).status).to.equal(200);
    expect((await primary.postReport(dlrUrl, { id: ids[1], status: 'delivered' })).status).to.equal(200);
    expect((await primary.postReport(dlrUrl, { id: 'up-late-3', message_id: ids[2], status: 'undelivered' })).status).to.equal(200);
    // A repeat changes nothing more.
    expect((await primary.postReport(dlrUrl, { id: 'up-late-1', message_id: ids[0], status: 'delivered' })).status).to.equal(200);

    const [first, second, third] = await Promise.all(ids.map(async (id) => (await call('GET', `/messages/${id}`, { auth: tenant.key })).body.data));
    expect(first).to.include({ status: 'delivered', cost: 0.01, error: null, route_id: tenant.routeIds[0] });
    expect(first.delivered_at).to.be.a('string');
    expect(second).to.include({ status: 'delivered', cost: 0.01 });
    expect(third).to.include({ status: 'failed', cost: 0 });
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('9.9800');
    const charges = await harness.db('ledger_entries').where({ message_id: ids[0] }).orderBy('id').select('kind', 'amount', 'description');
    expect(charges.map((entry) => [entry.kind, entry.amount])).to.deep.equal([
      ['debit', '-0.0100'],
      ['refund', '0.0100'],
      ['debit', '-0.0100'],
    ]);
    expect(charges[2].description).to.match(/^Charged again: the upstream delivered the message/);
    const events = await harness
      .db('events')
      .where('data', '@>', JSON.stringify({ id: ids[0] }))
      .orderBy('created_at')
      .pluck('type');
    expect(events).to.deep.equal(['message.failed', 'message.delivered']);
  });

  it('fails over after a timeout when the route says failover_on_timeout', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 200, failover_on_timeout: true }), httpRoute(backup)] });
    primary.behave({ hang: true });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', route_id: tenant.routeIds[1], attempts: 2 });
    const outcomes = await harness.db('message_attempts').where({ message_id: sent.id }).orderBy('id').pluck('outcome');
    expect(outcomes).to.deep.equal(['unknown', 'accepted']);
  });

  it('retries an idempotent route under the same Idempotency-Key after a timeout, and never another route', async function () {
    this.timeout(40_000);
    const tenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 200, idempotent: true }), httpRoute(backup)] });
    primary.behave({ hang: true });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await primary.waitForRequests(1);
    primary.behave({ accept: true, id: 'idem-1' });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending', 30_000);
    expect(sent).to.include({ status: 'sent', route_id: tenant.routeIds[0], provider_message_id: 'idem-1', attempts: 2 });
    expect(primary.requests.map((request) => request.headers['idempotency-key'])).to.deep.equal([sent.id, sent.id]);
    expect(backup.requests).to.have.length(0);
  });

  it("stops at a 4xx: the message fails at once with the provider's error, no other route is tried, and it is refunded", async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary), httpRoute(backup)] });
    primary.behave({ status: 400, body: { error: { code: 'invalid_destination', message: 'The number is not reachable.' } } });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const failed = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', attempts: 1, cost: 0 });
    expect(failed.error).to.deep.equal({ type: 'provider_error', code: 'invalid_destination', message: 'The number is not reachable.' });
    expect(backup.requests).to.have.length(0);
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('10.0000');
  });

  it('applies a delivery report that arrives before the submit response', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    primary.behave({ accept: true, id: 'early-1' });
    const held = primary.holdNextAnswer();
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await held.received;
    const report = await primary.postReport(primary.requests[0].body.dlr_url, { id: 'early-1', status: 'delivered', timestamp: '2026-11-22T10:00:00Z' });
    expect(report.status).to.equal(200);
    expect((await waitForMessage(tenant, response.body.data.id, () => true)).status).to.equal('pending');
    held.release();
    const delivered = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'delivered');
    expect(delivered.delivered_at).to.equal('2026-11-22T10:00:00.000Z');
    const events = await harness.db('events').where({ message_id: delivered.id }).orderBy('created_at');
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered']);
    expect(await harness.db('early_reports').where({ provider_message_id: 'early-1' })).to.have.length(0);
  });

  it("applies a repeated delivery report once, and observes the message's sent-to-delivered time once", async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    primary.behave({ accept: true, id: 'repeat-1' });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    const dlrUrl = primary.requests[0].body.dlr_url;
    const answers = await Promise.all([1, 2, 3].map(() => primary.postReport(dlrUrl, { id: 'repeat-1', status: 'delivered' })));
    expect(answers.map((a) => a.status)).to.deep.equal([200, 200, 200]);
    const delivered = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'delivered');
    expect(await harness.db('events').where({ message_id: response.body.data.id, type: 'message.delivered' })).to.have.length(1);

    // Each report is counted before its latency is observed: once all three are, so is every observation.
    const route = await routeName(tenant.routeIds[0]);
    const series = (name: string, labels = '') => new RegExp(`^dispatch_${name}\\{route="${route}"${labels}\\}`);
    const figures = await eventually(
      () => scrape(),
      (text) => sample(text, series('delivery_reports_total', ',status="delivered"')) === 3,
      { what: 'the three reports counted' },
    );
    expect(sample(figures, series('delivery_latency_seconds_count'))).to.equal(1);
    const seconds = (Date.parse(delivered.delivered_at as string) - Date.parse(delivered.sent_at as string)) / 1000;
    // The answer carries milliseconds; the database, microseconds.
    expect(sample(figures, series('delivery_latency_seconds_sum'))).to.be.closeTo(seconds, 0.002);
  });

  it("turns a failed report into undelivered, keeping the provider's reason", async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    primary.behave({ accept: true, id: 'gone-1' });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    await primary.postReport(primary.requests[0].body.dlr_url, {
      id: 'gone-1',
      status: 'failed',
      error_code: 'EXPIRED',
      error_message: 'Validity period expired',
    });
    const undelivered = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'undelivered');
    expect(undelivered.error).to.deep.equal({ type: 'provider_error', code: 'undelivered', message: 'Validity period expired' });
  });

  it('answers 404 to a report at an unknown URL (one with NUL too) and 400 to a malformed report', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    const origin = harness.baseUrl.replace('/api/v1', '');
    expect((await primary.postReport(`${origin}/callbacks/dlr/${'x'.repeat(32)}`, { id: 'a', status: 'delivered' })).status).to.equal(404);
    // No route's token holds NUL; the lookup must not take it to the database, where it fails the statement.
    expect((await primary.postReport(`${origin}/callbacks/dlr/x%00y`, { id: 'a', status: 'delivered' })).status).to.equal(404);
    primary.behave({ accept: true, id: 'shape-1' });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    const malformed = await primary.postReport(primary.requests[0].body.dlr_url, { id: 'shape-1', status: 'lost' });
    expect(malformed.status).to.equal(400);
    expect(((await malformed.json()) as { error: { code: string } }).error.code).to.equal('parameter_invalid');
  });

  it('answers 400 naming the field to a report whose id or error_code holds a NUL or a lone surrogate, and leaves the message as it was', async () => {
    const tenant = await sendingTenant({ routes: [httpRoute(primary)] });
    primary.behave({ accept: true, id: 'hostile-1' });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    const dlrUrl = primary.requests.at(-1)!.body.dlr_url;
    for (const [field, report] of [
      ['id', { id: 'hostile\u00001', status: 'delivered' }],
      ['id', { id: '\ud800', status: 'delivered' }],
      ['error_code', { id: 'hostile-1', status: 'failed', error_code: 'E\u0000' }],
      ['error_code', { id: 'hostile-1', status: 'failed', error_code: 'E\udc00' }],
    ] as const) {
      const answer = await primary.postReport(dlrUrl, report);
      expect(answer.status, JSON.stringify(report)).to.equal(400);
      expect(((await answer.json()) as { error: { param: string } }).error.param).to.equal(field);
    }
    expect((await call('GET', `/messages/${response.body.data.id}`, { auth: tenant.key })).body.data.status).to.equal('sent');
  });

  it('does not hold back messages to a healthy route while another route hangs', async () => {
    const slowTenant = await sendingTenant({ routes: [httpRoute(primary, { timeout_ms: 15_000 })] });
    const fastTenant = await sendingTenant({ routes: [httpRoute(backup)] });
    primary.behave({ hang: true });
    const slow = await Promise.all(
      Array.from({ length: 4 }, () => call('POST', '/messages/send', { auth: slowTenant.key, body: { to: TO, from: 'Dispatch', body: 'Slow' } })),
    );
    await primary.waitForRequests(4);
    const response = await call('POST', '/messages/send', { auth: fastTenant.key, body: { to: TO, from: 'Dispatch', body: 'Fast' } });
    await waitForMessage(fastTenant, response.body.data.id, (m) => m.status === 'sent');
    // Order, not time: the healthy message went out while every hanging one was still waiting on its upstream.
    const statuses = await harness
      .db('messages')
      .whereIn(
        'id',
        slow.map((answer) => answer.body.data.id),
      )
      .pluck('status');
    expect(statuses).to.deep.equal(['pending', 'pending', 'pending', 'pending']);
  });
});

describe('delivery reports that never find their message', () => {
  it('are kept a week, then purged', async () => {
    const { purgeEarlyReports } = await import('../../db/early-reports.ts');
    const tenant = await sendingTenant();
    const routeId = tenant.routeIds[0];
    await harness.db('early_reports').insert([
      { route_id: routeId, provider_message_id: 'stale-1', report: JSON.stringify({ status: 'delivered' }), created_at: new Date(Date.now() - 8 * 86_400_000) },
      { route_id: routeId, provider_message_id: 'fresh-1', report: JSON.stringify({ status: 'delivered' }) },
    ]);
    expect(await purgeEarlyReports(harness.db, 7)).to.be.at.least(1);
    const left = (await harness.db('early_reports').where({ route_id: routeId })).map((row) => row.provider_message_id);
    expect(left).to.deep.equal(['fresh-1']);
  });
});
