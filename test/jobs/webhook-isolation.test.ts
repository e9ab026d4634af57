import { expect } from 'chai';
import type { Dispatch } from '../../app/server.ts';
import { call } from '../support/client.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { startInstance } from '../support/harness.ts';
import { siblingDatabase } from '../support/sibling-database.ts';
import { WebhookReceiver, type Answer } from '../support/webhook-receiver.ts';
import { allSettled, attemptsOf, deliveriesOf, waitUntil } from '../support/webhook-state.ts';

async function ok<Data>(expected: number, answer: Promise<{ status: number; body: { data: Data } }>): Promise<Data> {
  const { status, body } = await answer;
  expect(status, JSON.stringify(body)).to.equal(expected);
  return body.data;
}

/** An account on `baseUrl` whose messages all fail at once (a rejecting route): one message.failed event each. */
const rejectingTenant = async (baseUrl: string): Promise<string> => (await sendingTenant({ baseUrl, routes: [{ config: { outcome: 'rejected' } }] })).key;

const EVENTS = 20;
const recipients = Array.from({ length: EVENTS }, (_, i) => `+1415555${String(3000 + i)}`);

/**
 * A Dispatch of the suite's own, on a database of its own, with `env` added to its settings, and
 * the receivers of its endpoints: registers the hooks that start it and, after the suite, release
 * every held request and stop everything.
 */
function dispatchOfItsOwn(env: Record<string, string>) {
  let sibling: Awaited<ReturnType<typeof siblingDatabase>> | undefined;
  let dispatch: Dispatch | undefined;
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    sibling = await siblingDatabase();
    dispatch = await startInstance(sibling.url, env);
  });

  after(async () => {
    for (const receiver of receivers) receiver.release();
    await dispatch?.stop();
    for (const receiver of receivers) await receiver.stop();
    await sibling?.drop();
  });

  return {
    get dispatch(): Dispatch {
      return dispatch as Dispatch;
    },
    endpoint: async (key: string, answer: Answer): Promise<{ receiver: WebhookReceiver; id: string }> => {
      const receiver = await WebhookReceiver.start();
      receivers.push(receiver);
      receiver.answerWith(answer);
      const created = await ok(201, call('POST', '/webhooks/create', { auth: key, baseUrl: (dispatch as Dispatch).baseUrl, body: { url: receiver.url } }));
      return { receiver, id: created.id };
    },
  };
}

describe('webhook isolation between endpoints', function () {
  this.timeout(120_000);
  // A deadline longer than the test: a hanging request stays open until the test releases it,
  // so what happens while it is open is an order, not a race against the clock.
  const suite = dispatchOfItsOwn({ WEBHOOK_TIMEOUT_MS: '60000' });
  const { endpoint } = suite;

  it("delivers every event to another account's endpoint while one account's failing endpoints hold their requests open", async () => {
    const flooding = await rejectingTenant(suite.dispatch.baseUrl);
    const kinds: Answer[] = ['hang', 'stall', { status: 200, afterMs: 300 }, 302, 410, 'close-mid-body', 503];
    const [hanging, stalled] = await Promise.all(kinds.map((answer) => endpoint(flooding, answer)));
    await ok(201, call('POST', '/messages/bulk', { auth: flooding, baseUrl: suite.dispatch.baseUrl, body: { recipients, from: 'Dispatch', body: 'Flood' } }));
    await waitUntil('the flood holding requests open', () => hanging.receiver.openRequests > 0 && stalled.receiver.openRequests > 0);

    const other = await rejectingTenant(suite.dispatch.baseUrl);
    const healthy = await endpoint(other, 200);
    await ok(201, call('POST', '/messages/bulk', { auth: other, baseUrl: suite.dispatch.baseUrl, body: { recipients, from: 'Dispatch', body: 'Healthy' } }));
    await waitUntil('every delivery to the healthy endpoint settled', () => allSettled(healthy.id, EVENTS, suite.dispatch.db), 30_000);

    // Nothing has cut the hanging requests yet: the healthy endpoint's deliveries waited for none of them.
    expect(hanging.receiver.openRequests).to.be.above(0);
    expect(stalled.receiver.openRequests).to.be.above(0);
    expect(await attemptsOf(hanging.id, suite.dispatch.db)).to.have.length(0);
    const attempts = await attemptsOf(healthy.id, suite.dispatch.db);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.succeeded])).to.deep.equal(Array.from({ length: EVENTS }, () => [1, true]));
    expect(new Set(healthy.receiver.received.map((delivery) => delivery.event.id)).size).to.equal(EVENTS);
  });
});

/** The slots shared by every lane (jobs/deliver-webhook.ts): what hanging endpoints can hold at most. */
const SHARED_SLOTS = 16;

describe('webhook turns while hanging endpoints hold every shared slot', function () {
  this.timeout(120_000);
  // Hanging requests stay open until the test releases them, and a released one's retry falls
  // due after the test: what happens meanwhile is an order.
  const suite = dispatchOfItsOwn({ WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_RETRY_SCHEDULE: '0,600' });
  const { endpoint } = suite;

  it("gives a slot that frees to another account's new endpoint before the next of the hanging account's queued endpoints", async () => {
    const flooding = await rejectingTenant(suite.dispatch.baseUrl);
    const hanging: { receiver: WebhookReceiver; id: string }[] = [];
    for (let i = 0; i < SHARED_SLOTS + 4; i++) hanging.push(await endpoint(flooding, 'hang'));
    await ok(
      201,
      call('POST', '/messages/bulk', {
        auth: flooding,
        baseUrl: suite.dispatch.baseUrl,
        body: { recipients: recipients.slice(0, 1), from: 'Dispatch', body: 'Flood' },
      }),
    );
    const holding = () => hanging.filter(({ receiver }) => receiver.openRequests > 0);
    await waitUntil('the hanging endpoints holding every shared slot', () => holding().length === SHARED_SLOTS);

    const other = await rejectingTenant(suite.dispatch.baseUrl);
    const fresh = await endpoint(other, 200);
    await ok(
      201,
      call('POST', '/messages/send', { auth: other, baseUrl: suite.dispatch.baseUrl, body: { to: recipients[1], from: 'Dispatch', body: 'Hello' } }),
    );
    // Its job is queued behind the four hanging endpoints' older ones; no slot is free yet.
    await waitUntil('its delivery queued', async () => (await deliveriesOf(fresh.id, suite.dispatch.db)).length === 1);
    expect(await attemptsOf(fresh.id, suite.dispatch.db)).to.have.length(0);
    expect(fresh.receiver.received).to.have.length(0);

    holding()[0].receiver.release();
    await waitUntil("the other account's new endpoint served", () => fresh.receiver.received.length === 1);
    const queued = hanging.filter(({ receiver }) => receiver.received.length === 0 || receiver.received[0].sequence > fresh.receiver.received[0].sequence);
    expect(queued).to.have.length(4);
    await waitUntil('its delivery settled', () => allSettled(fresh.id, 1, suite.dispatch.db));
    expect((await attemptsOf(fresh.id, suite.dispatch.db)).map((attempt) => [attempt.attempt, attempt.succeeded])).to.deep.equal([[1, true]]);
  });
});
