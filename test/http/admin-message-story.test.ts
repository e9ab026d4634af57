import { expect } from 'chai';
import { call, expectError, type AnswerData } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { eventually, receivingEndpoint, sendingTenant, storeMessages, waitForMessage } from '../support/fixtures.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';

const story = (id: string) => call('GET', `/admin/messages/${id}/story`, { auth: 'admin' });
const deliveries = (entries: { kind: string }[]) => entries.filter((entry) => entry.kind === 'webhook_delivery').length;

type StoryEntry = AnswerData<'GET', '/admin/messages/{id}/story'>['entries'][number];
/** The entry as one of its kind, which it must be. */
function ofKind<K extends StoryEntry['kind']>(entry: StoryEntry, kind: K): Extract<StoryEntry, { kind: K }> {
  expect(entry.kind).to.equal(kind);
  return entry as Extract<StoryEntry, { kind: K }>;
}

describe('GET /admin/messages/{id}/story', () => {
  let primary: FakeHttpProvider;
  let backup: FakeHttpProvider;
  let receiver: WebhookReceiver | undefined;

  beforeEach(async () => {
    primary = await FakeHttpProvider.start();
    backup = await FakeHttpProvider.start();
  });

  afterEach(async () => {
    await primary.stop();
    await backup.stop();
    await receiver?.stop();
    receiver = undefined;
  });

  it('tells a failed-over, delivered message in time order: charge, attempts, statuses, events, webhook deliveries, refund', async () => {
    // The backup is cheaper, so that taking it refunds the difference: a second ledger row.
    const tenant = await sendingTenant({
      routes: [
        { provider: 'http', config: { url: primary.url }, price: 0.02 },
        { provider: 'http', config: { url: backup.url }, price: 0.015 },
      ],
    });
    ({ receiver } = await receivingEndpoint(tenant, 200));
    primary.behave({ status: 503 });
    backup.behave({ accept: true, id: 'story-1' });

    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Your code is 1234' } });
    const id = sent.body.data.id;
    await waitForMessage(tenant, id, (message) => message.status === 'sent');
    // The delivery report only after the sent event's delivery, so that the two deliveries cannot interleave.
    await eventually(
      async () => (await story(id)).body.data.entries,
      (entries) => deliveries(entries) === 1,
      { what: 'the first webhook delivery' },
    );
    expect((await backup.postReport(backup.requests[0].body.dlr_url, { id: 'story-1', status: 'delivered' })).status).to.equal(200);
    const { body } = await eventually(
      () => story(id),
      (response) => deliveries(response.body.data.entries) === 2,
      { what: 'the second webhook delivery' },
    );

    const { message, entries } = body.data;
    expect(message).to.include({ id, object: 'message', account_id: tenant.accountId, status: 'delivered', attempts: 2, route_id: tenant.routeIds[1] });
    expect(entries.map((entry: { kind: string }) => entry.kind)).to.deep.equal([
      'status',
      'ledger',
      'attempt',
      'attempt',
      'ledger',
      'status',
      'event',
      'webhook_delivery',
      'status',
      'event',
      'webhook_delivery',
    ]);
    const [pending, debit, refused, accepted, refund, sentStatus, sentEvent, firstDelivery, delivered, deliveredEvent, secondDelivery] = entries;
    expect(ofKind(pending, 'status').status).to.equal('pending');
    expect(ofKind(debit, 'ledger').transaction).to.include({ type: 'debit', amount: -0.02, currency: 'USD', message_id: id });
    expect(refused).to.include({ attempt: 1, route_id: tenant.routeIds[0], outcome: 'retryable' });
    expect(accepted).to.include({ attempt: 2, route_id: tenant.routeIds[1], outcome: 'accepted', error_code: null });
    expect(ofKind(refund, 'ledger').transaction).to.include({ type: 'refund', amount: 0.005, message_id: id });
    expect(ofKind(sentStatus, 'status').status).to.equal('sent');
    expect(ofKind(sentEvent, 'event').type).to.equal('message.sent');
    expect(ofKind(firstDelivery, 'webhook_delivery').webhook_attempt).to.include({
      event_id: ofKind(sentEvent, 'event').event_id,
      attempt: 1,
      succeeded: true,
      status_code: 200,
    });
    expect(ofKind(delivered, 'status').status).to.equal('delivered');
    expect(ofKind(deliveredEvent, 'event').type).to.equal('message.delivered');
    expect(ofKind(secondDelivery, 'webhook_delivery').webhook_attempt).to.include({ event_id: ofKind(deliveredEvent, 'event').event_id, succeeded: true });
    const times = entries.map((entry: { at: string }) => entry.at);
    expect(times).to.deep.equal([...times].sort());
  });

  it('tells a bulk item refused on acceptance as failed only, never pending', async () => {
    const tenant = await sendingTenant();
    const [id] = await storeMessages(tenant, [
      { status: 'failed', cost: '0', error: { type: 'invalid_request_error', code: 'recipient_blocklisted', message: 'Blocked.' }, failed_at: new Date() },
    ]);
    const response = await story(id);
    expect(response.status).to.equal(200);
    expect(response.body.data.entries.map((entry) => [entry.kind, 'status' in entry ? entry.status : undefined])).to.deep.equal([['status', 'failed']]);
  });

  it('answers 404 for an unknown message and 400 for a malformed id', async () => {
    expectError(await story('msg_000000000000000000000000'), 404, 'resource_not_found', 'id');
    expectError(await story('%E2%82'), 400, 'parameter_invalid', 'id');
  });
});
