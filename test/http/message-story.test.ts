import { expect } from 'chai';
import { call, expectError, type AnswerData } from '../support/client.ts';
import { createTenant, eventually, receivingEndpoint, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import type { WebhookReceiver } from '../support/webhook-receiver.ts';

type StoryEntry = AnswerData<'GET', '/messages/{id}/story'>['entries'][number];
type WebhookDelivery = Extract<StoryEntry, { kind: 'webhook_delivery' }>;

const webhookAttempts = (entries: StoryEntry[]) =>
  entries.filter((entry): entry is WebhookDelivery => entry.kind === 'webhook_delivery').map((entry) => entry.webhook_attempt);

describe('GET /messages/{id}/story', () => {
  let receiver: WebhookReceiver | undefined;

  afterEach(async () => {
    await receiver?.stop();
    receiver = undefined;
  });

  it("tells the account's own message as the operator's story does: statuses, attempt, events, each webhook attempt with its HTTP status, ledger", async () => {
    const tenant = await sendingTenant();
    // The first webhook attempt fails; its retry (1 s later in tests) and every other attempt succeed.
    ({ receiver } = await receivingEndpoint(tenant, 200));
    receiver.answerWith((index) => (index === 0 ? 503 : 200));
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Your code is 1234' } });
    const id = sent.body.data.id;
    await waitForMessage(tenant, id, (message) => message.status === 'delivered');
    const { body } = await eventually(
      () => call('GET', `/messages/${id}/story`, { auth: tenant.key }),
      (response) => webhookAttempts(response.body.data.entries).filter((attempt) => attempt.succeeded).length === 2,
      { what: 'both events delivered' },
    );

    const { message, entries } = body.data;
    expect(message).to.include({ id, object: 'message', account_id: tenant.accountId, status: 'delivered' });
    expect(entries.filter((entry) => entry.kind !== 'webhook_delivery').map((entry) => ('status' in entry ? entry.status : entry.kind))).to.deep.equal([
      'pending',
      'ledger',
      'attempt',
      'sent',
      'event',
      'delivered',
      'event',
    ]);
    const ledger = entries.find((entry) => entry.kind === 'ledger');
    expect(ledger && 'transaction' in ledger && ledger.transaction).to.include({ type: 'debit', amount: -0.01, message_id: id });
    const attempts = webhookAttempts(entries).map((attempt) => [attempt.attempt, attempt.succeeded, attempt.status_code]);
    expect(attempts).to.have.deep.members([
      [1, false, 503],
      [2, true, 200],
      [1, true, 200],
    ]);
    const times = entries.map((entry) => entry.at);
    expect(times).to.deep.equal([...times].sort());

    // One story: the operator's answer is this one.
    const admin = await call('GET', `/admin/messages/${id}/story`, { auth: 'admin' });
    expect(admin.body.data).to.deep.equal(body.data);
  });

  it("answers 404 for another account's message exactly as for a missing one, and 400 for a malformed id", async () => {
    const [owner, stranger] = [await sendingTenant(), await createTenant()];
    const sent = await call('POST', '/messages/send', { auth: owner.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Mine' } });
    const id = sent.body.data.id;
    expect((await call('GET', `/messages/${id}/story`, { auth: owner.key })).status).to.equal(200);
    const foreign = await call('GET', `/messages/${id}/story`, { auth: stranger.key });
    const missing = await call('GET', '/messages/msg_000000000000000000000000/story', { auth: stranger.key });
    expectError(foreign, 404, 'resource_not_found', 'id');
    expectError(missing, 404, 'resource_not_found', 'id');
    expect(foreign.body.error.message.replace(id, 'ID')).to.equal(missing.body.error.message.replace('msg_000000000000000000000000', 'ID'));
    expectError(await call('GET', '/messages/%E2%82/story', { auth: owner.key }), 400, 'parameter_invalid', 'id');
  });

  it('answers 403 to a key without sms:read', async () => {
    const tenant = await sendingTenant();
    const sender = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Send only', permissions: ['sms:send'] } });
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Hi' } });
    const response = await call('GET', `/messages/${sent.body.data.id}/story`, { auth: sender.body.data.plain_key });
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.equal({ required_scope: 'sms:read' });
  });
});
