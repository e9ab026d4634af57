import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import {
  AuthenticationError,
  BalanceError,
  Dispatch,
  DispatchError,
  InvalidRequestError,
  PermissionError,
  RateLimitError,
  type DispatchOptions,
  type Message,
} from '../../sdk/index.ts';
import { contractCheckingFetch } from '../support/client.ts';
import { createAdminKey, createTenant, eventually, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset, simulateInbound } from '../support/inbound.ts';

// The SDK against the live Dispatch of the run: fixtures set tenants up through the admin API,
// everything else goes through the SDK.

const TO = '+14155550123';
// Every answer the SDK receives is checked against openapi.yaml, as the rest of the suite's are.
const sdk = (apiKey: string, options: Partial<DispatchOptions> = {}) =>
  new Dispatch({ apiKey, baseUrl: harness.baseUrl, fetch: contractCheckingFetch, ...options });

/** An SDK whose `requests` counts the HTTP requests it makes. */
function countingSdk(apiKey: string) {
  const counter = { requests: 0, urls: [] as string[] };
  const dispatch = sdk(apiKey, {
    fetch: (input, init) => {
      counter.requests++;
      counter.urls.push(input instanceof Request ? input.url : String(input));
      return contractCheckingFetch(input, init);
    },
  });
  return { dispatch, counter };
}

async function rejection(promise: Promise<unknown>): Promise<DispatchError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(DispatchError);
    return error as DispatchError;
  }
  throw new Error('expected the call to fail');
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

function waitFor(dispatch: Dispatch, id: string, status: Message['status']): Promise<Message> {
  return eventually(
    () => dispatch.messages.get(id),
    (message) => message.status === status,
    { what: `message ${id} to be ${status}` },
  );
}

describe('SDK against a live Dispatch', () => {
  it('reads the account, the balance and the usage', async () => {
    const tenant = await sendingTenant({ balance: 12.5 });
    const dispatch = sdk(tenant.key);
    const account = await dispatch.account.get();
    expect(account).to.include({ id: tenant.accountId, object: 'account', status: 'active', balance: 12.5, currency: 'USD' });
    expect(await dispatch.balance.get()).to.include({ object: 'balance', balance: 12.5, currency: 'USD' });
    const usage = await dispatch.usage.get({ period: 'all' });
    expect(usage).to.include({ object: 'usage', period: 'all', currency: 'USD' });
    expect(usage.totals).to.deep.equal({ messages: 0, cost: 0 });
    expect((await dispatch.usage.get()).period).to.equal('month');
  });

  it('sends a message, reads it back, and lists its events across pages', async () => {
    const tenant = await sendingTenant();
    const dispatch = sdk(tenant.key);
    const sent = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Hello from the SDK', reference: 'sdk-1' });
    expect(sent).to.include({ object: 'message', to: TO, from: 'Dispatch', body: 'Hello from the SDK', status: 'pending', reference: 'sdk-1' });
    expect(sent.id).to.match(/^msg_/);
    expect((await dispatch.messages.get(sent.id)).id).to.equal(sent.id);

    const delivered = await waitFor(dispatch, sent.id, 'delivered');
    expect(delivered.delivered_at).to.be.a('string');
    const events = await collect(dispatch.events.listAll({ limit: 1 }));
    expect(events.map((event) => event.type)).to.include.members(['message.sent', 'message.delivered']);
    for (const event of events) {
      expect(event.object).to.equal('event');
      expect(event.data).to.include({ id: sent.id });
    }
    const delivery = await dispatch.events.list({ type: 'message.delivered' });
    expect(delivery.data).to.have.length(1);
    expect(delivery.pagination).to.include({ total: 1, has_more: false });
  });

  it('sends once for the same idempotency key: same message, one charge', async () => {
    const tenant = await sendingTenant({ balance: 10, routes: [{ price: 0.01 }] });
    const dispatch = sdk(tenant.key);
    const idempotencyKey = randomUUID();
    const first = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Once only' }, { idempotencyKey });
    const again = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Once only' }, { idempotencyKey });
    expect(again.id).to.equal(first.id);
    expect(again).to.deep.equal(first);
    expect(first.cost).to.equal(0.01);
    expect((await dispatch.balance.get()).balance).to.be.closeTo(9.99, 1e-9);
    expect((await dispatch.messages.list()).pagination.total).to.equal(1);

    // Without a key given, each call gets its own: two sends, two charges.
    await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Twice' });
    await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Twice' });
    expect((await dispatch.balance.get()).balance).to.be.closeTo(9.97, 1e-9);
  });

  it('sends a bulk request', async () => {
    const tenant = await sendingTenant();
    const dispatch = sdk(tenant.key);
    const result = await dispatch.messages.bulk({ recipients: [TO, '+14155550124', TO], from: 'Dispatch', body: 'To all', reference: 'bulk-1' });
    expect(result).to.include({ object: 'bulk_result', total: 3, sent: 3, failed: 0 });
    expect(result.messages.map((message) => message.to)).to.deep.equal([TO, '+14155550124', TO]);
    expect(new Set(result.messages.map((message) => message.id)).size).to.equal(3);
    expect(result.messages.every((message) => message.reference === 'bulk-1')).to.equal(true);
  });

  it('previews a send and a bulk without sending, schedules them, and cancels them (a repeat answers the same)', async () => {
    const tenant = await sendingTenant({ balance: 10, routes: [{ price: 0.01 }] });
    const dispatch = sdk(tenant.key);
    harness.clock.set(new Date('2031-05-20T12:00:00Z'));
    const sendAt = '2031-05-20T14:00:00+01:00';

    const preview = await dispatch.messages.preview({ recipients: [TO, '+10005550100'], from: 'Dispatch', body: '“Soon”', send_at: sendAt });
    expect(preview).to.include({ object: 'message_preview', total: 2, sendable: 1, refused: 1, cost: 0.01, currency: 'USD' });
    expect(preview.recipients[0]).to.include({
      to: TO,
      encoding: 'UCS-2',
      segments: 1,
      route_id: tenant.routeIds[0],
      cost: 0.01,
      send_at: '2031-05-20T13:00:00.000Z',
      refusal: null,
    });
    expect(preview.recipients[0].ucs2_characters).to.deep.equal([
      { character: '“', position: 0 },
      { character: '”', position: 5 },
    ]);
    expect(preview.recipients[1].refusal?.error.code).to.equal('number_invalid');
    const single = await dispatch.messages.preview({ to: TO, from: 'Nobody', body: 'Hi' });
    expect(single).to.include({ total: 1, sendable: 0, refused: 1 });
    expect(single.recipients[0].refusal).to.deep.include({ status: 400 });
    expect((await dispatch.messages.list()).pagination.total).to.equal(0);

    const later = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Later', send_at: sendAt, validity_period: 600 });
    expect(later).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z', validity_period: 600, bulk_id: null });
    expect((await dispatch.messages.list({ scheduled: true, send_before: '2031-05-20T13:30:00Z' })).data.map((message) => message.id)).to.deep.equal([
      later.id,
    ]);
    const canceled = await dispatch.messages.cancel(later.id);
    expect(canceled).to.include({ id: later.id, status: 'failed' });
    expect(canceled.error?.code).to.equal('canceled');
    expect(await dispatch.messages.cancel(later.id)).to.deep.equal(canceled);

    const bulk = await dispatch.messages.bulk({ recipients: [TO, '+14155550124'], from: 'Dispatch', body: 'Later, all', send_at: sendAt });
    expect(bulk.bulk_id).to.match(/^bulk_/);
    const bulkCanceled = await dispatch.messages.cancelBulk(bulk.bulk_id!);
    expect(bulkCanceled).to.deep.equal({ object: 'bulk_cancel', bulk_id: bulk.bulk_id, canceled: 2, not_cancelable: 0 });
    expect(await dispatch.messages.cancelBulk(bulk.bulk_id!)).to.deep.equal(bulkCanceled);
    expect((await dispatch.messages.list({ scheduled: true })).data).to.deep.equal([]);
    expect((await dispatch.balance.get()).balance).to.be.closeTo(10, 1e-9);
  });

  it('retries a cancel after a 5xx (a repeat answers the same); a message already handed over is not cancelable (409)', async () => {
    const tenant = await sendingTenant();
    let failNextCancel = true;
    const dispatch = sdk(tenant.key, {
      fetch: async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (failNextCancel && url.endsWith('/cancel')) {
          failNextCancel = false;
          return new Response('upstream hiccup', { status: 503, headers: { 'content-type': 'text/plain' } });
        }
        return contractCheckingFetch(input, init);
      },
    });
    const sent = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'At once' });
    await waitFor(dispatch, sent.id, 'delivered');
    const late = await rejection(dispatch.messages.cancel(sent.id));
    expect(failNextCancel).to.equal(false);
    expect(late).to.be.instanceOf(InvalidRequestError);
    expect(late).to.include({ status: 409, code: 'message_not_cancelable' });
    expect(await rejection(dispatch.messages.cancelBulk('bulk_000000000000000000000000'))).to.include({ status: 404, code: 'resource_not_found' });
  });

  it('pages a list and iterates every page with listAll', async () => {
    const tenant = await sendingTenant();
    const { dispatch, counter } = countingSdk(tenant.key);
    const created = [];
    for (let i = 1; i <= 5; i++) created.push(await dispatch.senders.create({ sender_id: `SdkBrand${i}` }));
    expect(created[0]).to.include({ object: 'sender', sender_id: 'SdkBrand1', type: 'alphanumeric', status: 'pending' });
    expect((await dispatch.senders.get(created[0].id)).sender_id).to.equal('SdkBrand1');

    const first = await dispatch.senders.list({ limit: 2 });
    expect(first.data.map((sender) => sender.sender_id)).to.deep.equal(['SdkBrand5', 'SdkBrand4']);
    expect(first.pagination).to.deep.equal({ page: 1, limit: 2, total: 6, pages: 3, has_more: true });

    counter.requests = 0;
    counter.urls = [];
    const all = await collect(dispatch.senders.listAll({ limit: 2 }));
    expect(counter.requests).to.equal(3);
    expect(counter.urls.map((url) => new URL(url).search)).to.deep.equal(['?limit=2&page=1', '?limit=2&page=2', '?limit=2&page=3']);
    expect(all.map((sender) => sender.sender_id)).to.deep.equal(['SdkBrand5', 'SdkBrand4', 'SdkBrand3', 'SdkBrand2', 'SdkBrand1', 'Dispatch']);

    expect((await collect(dispatch.senders.listAll({ limit: 2, status: 'approved' }))).map((sender) => sender.sender_id)).to.deep.equal(['Dispatch']);
    expect(await collect(dispatch.senders.listAll({ limit: 2, page: 3 }))).to.have.length(2);

    for (let i = 0; i < 3; i++) await dispatch.messages.send({ to: TO, from: 'Dispatch', body: `Page ${i}` });
    const messages = await collect(dispatch.messages.listAll({ limit: 2, to: TO }));
    expect(messages.map((message) => message.body)).to.deep.equal(['Page 2', 'Page 1', 'Page 0']);
  });

  it('creates an API key that works, then revokes it', async () => {
    const tenant = await createTenant();
    const dispatch = sdk(tenant.key);
    const created = await dispatch.apiKeys.create({ name: 'SDK key', permissions: ['account:read'] });
    expect(created).to.include({ object: 'api_key', name: 'SDK key', is_active: true, rate_limit: 600 });
    expect(created.plain_key).to.match(/^ds_live_/);

    const limited = sdk(created.plain_key);
    expect((await limited.account.get()).id).to.equal(tenant.accountId);
    expect(await limited.apiKeys.current()).to.include({ id: created.id, name: 'SDK key' });
    const forbidden = await rejection(limited.balance.get());
    expect(forbidden).to.be.instanceOf(PermissionError);
    expect(forbidden).to.include({ status: 403, type: 'authorization_error', code: 'forbidden' });
    expect(forbidden.details).to.deep.equal({ required_scope: 'balance:read' });

    expect((await dispatch.apiKeys.list()).data.map((key) => key.id)).to.include(created.id);
    expect(await dispatch.apiKeys.revoke(created.id)).to.deep.equal({ id: created.id, object: 'api_key', deleted: true });
    expect((await rejection(limited.account.get())).status).to.equal(401);
    const listed = (await dispatch.apiKeys.list()).data.find((key) => key.id === created.id);
    expect(listed?.is_active).to.equal(false);
  });

  it('creates, reads, lists and deletes a webhook endpoint', async () => {
    const tenant = await createTenant();
    const dispatch = sdk(tenant.key);
    const created = await dispatch.webhooks.create({ url: 'http://127.0.0.1:9/sdk-hook', description: 'SDK test' });
    expect(created).to.include({ object: 'webhook_endpoint', url: 'http://127.0.0.1:9/sdk-hook', description: 'SDK test', is_active: true });
    expect(created.events).to.deep.equal(['*']);
    expect(created.signing_secret).to.be.a('string').and.have.length.above(0);

    const read = await dispatch.webhooks.get(created.id);
    expect(read.id).to.equal(created.id);
    expect(read).to.not.have.property('signing_secret');
    expect((await dispatch.webhooks.list()).data.map((endpoint) => endpoint.id)).to.deep.equal([created.id]);

    expect(await dispatch.webhooks.delete(created.id)).to.include({ id: created.id, deleted: true });
    expect((await dispatch.webhooks.list()).data).to.deep.equal([]);
    const gone = await rejection(dispatch.webhooks.get(created.id));
    expect(gone).to.be.instanceOf(InvalidRequestError);
    expect(gone).to.include({ status: 404, code: 'resource_not_found' });
  });

  it("tells a message's story, and resends one of its events to an endpoint", async () => {
    const tenant = await sendingTenant();
    const dispatch = sdk(tenant.key);
    const endpoint = await dispatch.webhooks.create({ url: 'http://127.0.0.1:9/sdk-hook', events: ['message.failed'] });
    const sent = await dispatch.messages.send({ to: TO, from: 'Dispatch', body: 'Story' });
    await waitFor(dispatch, sent.id, 'delivered');
    const story = await dispatch.messages.story(sent.id);
    expect(story.message).to.include({ id: sent.id, account_id: tenant.accountId, status: 'delivered' });
    const event = story.entries.find((entry) => entry.kind === 'event');
    expect(event && 'event_id' in event).to.equal(true);
    const eventId = (event as { event_id: string }).event_id;

    expect(await dispatch.webhooks.resend(endpoint.id, eventId)).to.include({ object: 'webhook_resend', endpoint_id: endpoint.id, event_id: eventId });
    expect(await rejection(dispatch.messages.story('msg_000000000000000000000000'))).to.include({ status: 404, code: 'resource_not_found' });
  });

  it('imports, lists and removes opt-outs; a send to an opted-out number is refused', async () => {
    const tenant = await sendingTenant();
    const dispatch = sdk(tenant.key);
    const [first, second] = ['+12127000101', '+12127000102'];
    const imported = await dispatch.optOuts.create({ numbers: [first, second, first, '0740012345'], reason: 'Imported' });
    expect(imported).to.include({ object: 'opt_out_import', total: 4, added: 2, unchanged: 1, failed: 1 });
    expect(imported.results.map((result) => result.status)).to.deep.equal(['added', 'added', 'unchanged', 'failed']);
    expect(imported.results[3].error).to.include({ code: 'number_invalid' });

    expect((await collect(dispatch.optOuts.listAll({ limit: 1 }))).map((optOut) => optOut.number).sort()).to.deep.equal([first, second]);
    const one = await dispatch.optOuts.list({ number: first });
    expect(one.data).to.have.length(1);
    expect(one.data[0]).to.include({ number: first, object: 'opt_out', source: 'api', reason: 'Imported', keyword: null });

    const refused = await rejection(dispatch.messages.send({ to: first, from: 'Dispatch', body: 'Not to you' }));
    expect(refused).to.be.instanceOf(InvalidRequestError);
    expect(refused).to.include({ status: 400, code: 'recipient_opted_out', param: 'to' });

    // The number goes in the path: its + must reach the server as %2B, not as a space.
    expect(await dispatch.optOuts.delete(first)).to.deep.equal({ id: first, object: 'opt_out', deleted: true });
    expect((await dispatch.optOuts.list()).data.map((optOut) => optOut.number)).to.deep.equal([second]);
    expect(await dispatch.messages.send({ to: first, from: 'Dispatch', body: 'Welcome back' })).to.include({ status: 'pending' });
    expect(await rejection(dispatch.optOuts.delete(first))).to.include({ status: 404, code: 'resource_not_found' });
  });

  it('lists and reads inbound messages, filtered, across pages; a STOP shows as its opted_out event', async () => {
    const tenant = await inboundTenant();
    const dispatch = sdk(tenant.key);
    const [alice, bob] = [randomHandset(), randomHandset()];
    const first = await simulateInbound(tenant.routeId, { from: alice, to: tenant.number, body: 'Is my parcel coming today?' });
    const second = await simulateInbound(tenant.routeId, { from: bob, to: tenant.number, body: 'Stop!' });
    const third = await simulateInbound(tenant.routeId, { from: alice, to: tenant.number, body: 'Thanks' });

    const all = await collect(dispatch.inboundMessages.listAll({ limit: 2 }));
    expect(all.map((message) => message.id)).to.deep.equal([third.id, second.id, first.id]);
    const fromAlice = await dispatch.inboundMessages.list({ from: alice });
    expect(fromAlice.data.map((message) => message.body)).to.deep.equal(['Thanks', 'Is my parcel coming today?']);
    expect(fromAlice.pagination).to.include({ total: 2, has_more: false });
    const read = await dispatch.inboundMessages.get(second.id);
    expect(read).to.include({
      id: second.id,
      object: 'inbound_message',
      from: bob,
      to: tenant.number,
      body: 'Stop!',
      keyword: 'STOP',
      route_id: tenant.routeId,
    });
    expect(await rejection(dispatch.inboundMessages.get('inb_000000000000000000000000'))).to.include({ status: 404, code: 'resource_not_found' });

    const received = await dispatch.events.list({ type: 'message.received' });
    expect(received.data.map((event) => event.data)).to.deep.include(read);
    const optedOut = await eventually(
      () => dispatch.events.list({ type: 'recipient.opted_out' }),
      (page) => page.data.length === 1,
      { what: "bob's opt-out event" },
    );
    expect(optedOut.data[0].data).to.include({ number: bob, source: 'keyword', keyword: 'STOP' });
  });

  it('reads and changes the keyword settings', async () => {
    const tenant = await createTenant();
    const dispatch = sdk(tenant.key);
    const defaults = await dispatch.keywords.get();
    expect(defaults).to.include({ object: 'keyword_settings', updated_at: null });
    expect(defaults.opt_out.default_keywords).to.include('STOP');
    const updated = await dispatch.keywords.update({ opt_out: { keywords: ['halt'] }, help: { reply: 'Acme: help at acme.example/help' } });
    expect(updated.opt_out.keywords).to.deep.equal(['HALT']);
    expect(updated.help).to.include({ reply: 'Acme: help at acme.example/help', reply_is_default: false });
    expect(await dispatch.keywords.get()).to.deep.equal(updated);
    const conflict = await rejection(dispatch.keywords.update({ opt_in: { keywords: ['STOP'] } }));
    expect(conflict).to.include({ status: 400, code: 'keyword_conflict', param: 'opt_in.keywords' });
  });

  describe('typed errors', () => {
    it('a 400 carries type, code, param and the request id, and is not retried', async () => {
      const tenant = await sendingTenant();
      const { dispatch, counter } = countingSdk(tenant.key);
      const error = await rejection(dispatch.messages.send({ to: 'nope', from: 'Dispatch', body: 'Hi' }));
      expect(error).to.be.instanceOf(InvalidRequestError);
      expect(error).to.include({ status: 400, type: 'invalid_request_error', code: 'parameter_invalid', param: 'to' });
      expect(error.requestId).to.match(/^req_/);
      expect(error.message).to.be.a('string').and.have.length.above(0);
      expect(counter.requests).to.equal(1);
    });

    it('a 401 with a bad key is an AuthenticationError', async () => {
      const error = await rejection(sdk('ds_live_not-a-real-key').account.get());
      expect(error).to.be.instanceOf(AuthenticationError);
      expect(error).to.include({ status: 401, type: 'authentication_error', code: 'unauthorized' });
    });

    it('a 404 is resource_not_found', async () => {
      const tenant = await createTenant();
      const error = await rejection(sdk(tenant.key).messages.get('msg_doesNotExist000000000000'));
      expect(error).to.include({ status: 404, type: 'invalid_request_error', code: 'resource_not_found' });
    });

    it('a 402 is a BalanceError with its details', async () => {
      const tenant = await sendingTenant({ balance: 0.001, routes: [{ price: 0.01 }] });
      const error = await rejection(sdk(tenant.key).messages.send({ to: TO, from: 'Dispatch', body: 'Too dear' }));
      expect(error).to.be.instanceOf(BalanceError);
      expect(error).to.include({ status: 402, code: 'insufficient_balance' });
      expect(error.details).to.include({ currency: 'USD' });
    });

    it('a 429 with maxRetries 0 is a RateLimitError with retryAfter', async () => {
      const tenant = await createTenant();
      const key = await createAdminKey(tenant.accountId, { name: 'One a minute', rate_limit: 1 });
      const dispatch = sdk(key.plain_key, { maxRetries: 0 });
      await dispatch.account.get();
      const error = await rejection(dispatch.account.get());
      expect(error).to.be.instanceOf(RateLimitError);
      expect(error).to.include({ status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
      expect((error as RateLimitError).retryAfter).to.be.within(1, 60);
    });
  });
});
