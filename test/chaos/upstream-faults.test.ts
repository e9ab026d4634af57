import { expect } from 'chai';
import { ledgerSum } from '../../db/ledger.ts';
import { call, type Schemas } from '../support/client.ts';
import { FakeHttpProvider, type FakeBehaviour } from '../support/fake-http-provider.ts';
import { harness } from '../support/harness.ts';
import { eventually } from './support/eventually.ts';
import { scenario, type Scenario } from './support/figures.ts';
import { SENDER, setUpTenant, type ChaosTenant } from './support/tenant.ts';

const TO = '+14155550123';
const TIMEOUT_MS = 1000;
const BALANCE = 10;
/** Messages per case: enough to see that the rule holds for each, not by luck for one. */
const MESSAGES = 3;
const SETTLE_MS = 90_000;
/** What a provider that dedupes answers a resubmit: not a fault. */
const ACCEPTED: FakeBehaviour = { accept: true };

/** Faults after which the provider may have taken the message: the outcome is unknown. */
const UNKNOWN_OUTCOMES: Record<string, FakeBehaviour> = {
  'hangs past the timeout': { hang: true },
  'resets the connection after reading the request': { reset: true },
  'answers 200 after the timeout': { accept: true, delayMs: TIMEOUT_MS + 1000 },
  'sends 200 and its headers, then stalls the body': { hang: true, afterHeaders: true },
};

interface Case {
  tenant: ChaosTenant;
  faulty: FakeHttpProvider;
  healthy: FakeHttpProvider;
  messages: Schemas['Message'][];
}

const submitsOf = (provider: FakeHttpProvider, messageId: string) => provider.requests.filter((request) => request.body?.message_id === messageId);

/** Polls a message through the API (every answer checked against openapi.yaml) until it has left `pending`. */
async function settled(tenant: ChaosTenant, id: string): Promise<Schemas['Message']> {
  let message!: Schemas['Message'];
  await eventually(
    `message ${id} out of pending`,
    SETTLE_MS,
    async () => {
      message = (await call('GET', `/messages/${id}`, { auth: tenant.key })).body.data;
      return { done: message.status !== 'pending', detail: JSON.stringify(message) };
    },
    100,
  );
  return message;
}

async function sendThrough(recorded: Scenario, tenant: ChaosTenant, count: number, label: string): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: SENDER, body: `${label} ${index}` } });
    recorded.answer(response.status);
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    ids.push(response.body.data.id);
  }
  return ids;
}

describe('upstream faults end to end, with a faulty first route and a healthy second one', function () {
  this.timeout(5 * 60_000);
  const providers: FakeHttpProvider[] = [];
  const recorded = scenario('upstream faults: unknown outcomes and garbage');

  afterEach(async () => {
    await Promise.all(providers.splice(0).map((provider) => provider.stop()));
  });

  /**
   * A fresh tenant whose priority-1 route answers each submit as `fault` says (given how many
   * times that message has been submitted there, this one included) and whose priority-2 route
   * accepts; answers its messages once they have left pending. Every answer but ACCEPTED is a
   * fault of kind `kind`, counted for the run's figures.
   */
  async function run(kind: string, fault: (submits: number) => FakeBehaviour, routeOptions: Record<string, unknown> = {}): Promise<Case> {
    const faulty = await FakeHttpProvider.start();
    const healthy = await FakeHttpProvider.start();
    providers.push(faulty, healthy);
    faulty.behave((body) => {
      const behaviour = fault(submitsOf(faulty, body.message_id).length);
      if (behaviour !== ACCEPTED) recorded.fault(`upstream ${kind}`);
      return behaviour;
    });
    const tenant = await setUpTenant(harness.baseUrl, {
      balance: BALANCE,
      routes: [
        { config: { url: faulty.url, timeout_ms: TIMEOUT_MS, ...routeOptions }, priority: 1 },
        { config: { url: healthy.url, timeout_ms: TIMEOUT_MS }, priority: 2 },
      ],
    });
    const ids = await sendThrough(recorded, tenant, MESSAGES, 'Fault');
    const messages = await Promise.all(ids.map((id) => settled(tenant, id)));
    recordSubmits({ tenant, faulty, healthy, messages }, routeOptions);
    return { tenant, faulty, healthy, messages };
  }

  /**
   * A duplicate is a message offered twice to a route that is not idempotent, or to both routes
   * when the first does not fail over on timeouts; with failover_on_timeout the operator chose the
   * second route over the risk, and that is counted apart.
   */
  function recordSubmits({ faulty, healthy, messages }: Case, routeOptions: Record<string, unknown>): void {
    const submits = messages.map((message) => ({ first: submitsOf(faulty, message.id).length, second: submitsOf(healthy, message.id).length }));
    const onBoth = submits.filter(({ first, second }) => first > 0 && second > 0).length;
    const twice = submits.filter(({ first, second }) => (first > 1 && !routeOptions.idempotent) || second > 1).length;
    // Every message was read back and left pending (run() waited for it): none lacks a row or a state.
    recorded.addMessages({ accepted: messages.length, without_row: 0, not_final: 0, duplicated: twice + (routeOptions.failover_on_timeout ? 0 : onBoth) });
    if (routeOptions.failover_on_timeout) recorded.tally("offered to both routes by failover_on_timeout (the operator's choice)", onBoth);
    if (routeOptions.idempotent)
      recorded.tally('resubmitted to the idempotent route under the same Idempotency-Key', submits.filter(({ first }) => first > 1).length);
  }

  async function expectRefunded(tenant: ChaosTenant): Promise<void> {
    const balance = await call('GET', '/balance', { auth: tenant.key });
    expect(balance.body.data.balance, 'balance after every message was refunded').to.equal(BALANCE);
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal(BALANCE.toFixed(4));
  }

  for (const [fault, behaviour] of Object.entries(UNKNOWN_OUTCOMES)) {
    describe(`when the first route ${fault}`, () => {
      it('fails the message with provider_timeout, says it may have been sent, refunds it, and never offers it to the second route', async () => {
        const { tenant, faulty, healthy, messages } = await run(fault, () => behaviour);
        for (const message of messages) {
          expect(message.status, JSON.stringify(message)).to.equal('failed');
          expect(message.error?.code, JSON.stringify(message.error)).to.equal('provider_timeout');
          expect(message.error?.message).to.match(/may/i);
          expect(message.cost).to.equal(0);
          expect(submitsOf(faulty, message.id), 'submits to the faulty route').to.have.length(1);
          expect(submitsOf(healthy, message.id), 'submits to the healthy route').to.have.length(0);
        }
        await expectRefunded(tenant);
      });

      it('fails over to the second route when the first has failover_on_timeout', async () => {
        const { tenant, faulty, healthy, messages } = await run(fault, () => behaviour, { failover_on_timeout: true });
        for (const message of messages) {
          expect(message, JSON.stringify(message)).to.include({ status: 'sent', route_id: tenant.routeIds[1] });
          expect(submitsOf(faulty, message.id), 'submits to the faulty route').to.have.length(1);
          expect(submitsOf(healthy, message.id), 'submits to the healthy route').to.have.length(1);
        }
      });

      it('retries the same route under the same Idempotency-Key when the first is idempotent, and never the second', async () => {
        // The fault strikes each message's first submit only, as a provider that dedupes would then answer.
        const { tenant, faulty, healthy, messages } = await run(fault, (submits) => (submits === 1 ? behaviour : ACCEPTED), { idempotent: true });
        for (const message of messages) {
          expect(message, JSON.stringify(message)).to.include({ status: 'sent', route_id: tenant.routeIds[0] });
          const submits = submitsOf(faulty, message.id);
          expect(submits.length, 'submits to the idempotent route').to.be.at.least(2);
          expect(
            submits.map((submit) => submit.headers['idempotency-key']),
            'Idempotency-Key of every submit',
          ).to.deep.equal(submits.map(() => message.id));
          expect(submitsOf(healthy, message.id), 'submits to the healthy route').to.have.length(0);
        }
      });
    });
  }

  describe('when the first route answers 200 with a body that is not JSON', () => {
    it('fails the message at once with provider_invalid_response, refunds it, and never offers it to the second route', async () => {
      const { tenant, faulty, healthy, messages } = await run('answers 200 with a body that is not JSON', () => ({
        status: 200,
        body: '<html>Service temporarily overloaded</html>',
      }));
      for (const message of messages) {
        expect(message.status, JSON.stringify(message)).to.equal('failed');
        expect(message.error?.code, JSON.stringify(message.error)).to.equal('provider_invalid_response');
        expect(message.cost).to.equal(0);
        expect(submitsOf(faulty, message.id), 'submits to the faulty route').to.have.length(1);
        expect(submitsOf(healthy, message.id), 'submits to the healthy route').to.have.length(0);
      }
      await expectRefunded(tenant);
    });
  });
});

describe('a healthy route of another account while many messages hang on a faulty one', function () {
  this.timeout(5 * 60_000);
  const HANGING = 40;
  /** Long enough that a healthy message waiting for a worker held by a hang is plain to see. */
  const HANG_TIMEOUT_MS = 15_000;
  let hanging: FakeHttpProvider;
  let healthy: FakeHttpProvider;
  const recorded = scenario("a hanging upstream beside another account's healthy one");

  before(async () => {
    hanging = await FakeHttpProvider.start();
    healthy = await FakeHttpProvider.start();
    hanging.behave({ hang: true });
  });

  after(async () => {
    await Promise.all([hanging.stop(), healthy.stop()]);
  });

  it('sends every message of the other account while the hanging ones are still unanswered', async () => {
    const stuck = await setUpTenant(harness.baseUrl, {
      balance: BALANCE,
      routes: [{ config: { url: hanging.url, timeout_ms: HANG_TIMEOUT_MS }, priority: 1 }],
    });
    const flowing = await setUpTenant(harness.baseUrl, { balance: BALANCE, routes: [{ config: { url: healthy.url, timeout_ms: TIMEOUT_MS }, priority: 1 }] });
    const stuckIds = await sendThrough(recorded, stuck, HANGING, 'Stuck');
    // The hanging messages were queued first: once one hangs, the rest are ahead of the healthy ones.
    await eventually('the first hanging submit', 30_000, () => ({ done: hanging.requests.length > 0, detail: 'no submit reached the hanging provider' }), 20);
    const flowingIds = await sendThrough(recorded, flowing, 20, 'Flowing');

    await eventually(
      'every message of the other account sent',
      60_000,
      async () => {
        const statuses = await Promise.all(flowingIds.map(async (id) => (await call('GET', `/messages/${id}`, { auth: flowing.key })).body.data.status));
        // The other account's messages are the ones this test follows to their state; the hanging ones settle after it.
        recorded.messages({ accepted: flowingIds.length, without_row: 0, not_final: statuses.filter((status) => status !== 'sent').length });
        return { done: statuses.every((status) => status === 'sent'), detail: `statuses: ${statuses.join(', ')}` };
      },
      100,
    );
    const stuckStatuses = await Promise.all(stuckIds.map(async (id) => (await call('GET', `/messages/${id}`, { auth: stuck.key })).body.data.status));
    const settledFirst = stuckStatuses.filter((status) => status !== 'pending');
    const submits = Map.groupBy([...hanging.requests, ...healthy.requests], (request) => String(request.body?.message_id));
    recorded.fault("upstream hangs (submits held by one account's route)", hanging.requests.length);
    recorded.measure('messages queued on the hanging route', HANGING);
    recorded.messages({ duplicated: [...submits.values()].filter((requests) => requests.length > 1).length });
    recorded.measure("hanging messages settled before the other account's were all sent", settledFirst.length);
    expect(
      settledFirst.length,
      `${settledFirst.length} of ${HANGING} hanging messages had already settled (after their ${HANG_TIMEOUT_MS} ms timeout) when the other account's messages were all sent: those waited for the hangs`,
    ).to.equal(0);
  });
});
