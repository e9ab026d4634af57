import { expect } from 'chai';
import { verifySignature } from '../../sdk/webhook-signature.ts';
import { call } from '../support/client.ts';
import { sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { allSettled, attemptsOf, deliveriesOf, endpointRow, waitUntil } from '../support/webhook-state.ts';

const TO = '+14155550123';

async function subscribe(tenant: Tenant, receiver: WebhookReceiver, events?: string[]) {
  const response = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, ...(events && { events }) } });
  expect(response.status).to.equal(201);
  return response.body.data as { id: string; signing_secret: string };
}

const send = (tenant: Tenant, body = 'Hello') =>
  call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body, reference: 'order-9' } });

describe('webhook delivery', () => {
  let receiver: WebhookReceiver;
  let other: WebhookReceiver;

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
    other = await WebhookReceiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
    await other.stop();
  });

  it('delivers message.sent then message.delivered, signed with the secret from creation over the exact bytes', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'delivered', dlr_delay_ms: 50 } }] });
    const endpoint = await subscribe(tenant, receiver);
    const message = (await send(tenant)).body.data;
    await receiver.waitFor((received) => received.length >= 2);
    expect(receiver.received.map((d) => d.event.type)).to.deep.equal(['message.sent', 'message.delivered']);
    for (const delivery of receiver.received) {
      verifySignature(delivery.rawBody, delivery.headers['dispatch-signature'] as string, endpoint.signing_secret);
      expect(delivery.headers['content-type']).to.equal('application/json');
      expect(delivery.headers['user-agent']).to.match(/^Dispatch\/\d+\.\d+\.\d+/);
      expect(delivery.event).to.include({ object: 'event' });
      expect(delivery.event.id).to.match(/^evt_/);
      expect(delivery.event.data).to.include({ id: message.id, reference: 'order-9', object: 'message' });
    }
    expect(receiver.received[1].event.data.delivered_at).to.be.a('string');
    expect(() => verifySignature(receiver.received[0].rawBody, receiver.received[0].headers['dispatch-signature'] as string, 'whsec_wrong')).to.throw();
    const listed = await call('GET', '/events', { auth: tenant.key });
    expect(listed.body.data.map((e: { id: string }) => e.id).sort()).to.deep.equal(receiver.received.map((d) => d.event.id).sort());
  });

  it('carries the error on message.failed', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    await subscribe(tenant, receiver);
    await send(tenant);
    await receiver.waitFor((received) => received.length >= 1);
    expect(receiver.received[0].event.type).to.equal('message.failed');
    expect(receiver.received[0].event.data.error).to.include({ code: 'provider_rejected' });
  });

  it('delivers only the types an endpoint subscribes to', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'delivered', dlr_delay_ms: 20 } }] });
    const deliveredOnly = await subscribe(tenant, receiver, ['message.delivered']);
    const sentOnly = await subscribe(tenant, other, ['message.sent']);
    const message = (await send(tenant)).body.data;
    // Deliveries are written with their events: once both events exist and every delivery is settled, nothing more can come.
    await waitUntil('both events recorded', async () => (await harness.db('events').where({ message_id: message.id })).length === 2);
    await waitUntil('every delivery settled', async () => (await allSettled(deliveredOnly.id, 1)) && (await allSettled(sentOnly.id, 1)));
    expect(receiver.received.map((d) => d.event.type)).to.deep.equal(['message.delivered']);
    expect(other.received.map((d) => d.event.type)).to.deep.equal(['message.sent']);
  });

  it('retries a receiver that fails twice and succeeds on the third attempt, same event id, fresh timestamps', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const endpoint = await subscribe(tenant, receiver);
    receiver.answerWith((index) => (index < 2 ? 500 : 200));
    await send(tenant);
    await receiver.waitFor((received) => received.length >= 3);
    const ids = new Set(receiver.received.map((d) => d.event.id));
    expect(ids.size).to.equal(1);
    const stamps = receiver.received.map((d) => /t=(\d+)/.exec(d.headers['dispatch-signature'] as string)?.[1]);
    expect(Number(stamps[2])).to.be.greaterThan(Number(stamps[0]));
    await waitUntil('the delivery settled', () => allSettled(endpoint.id, 1));
    expect(receiver.received).to.have.length(3);
    const state = (await call('GET', `/webhooks/${endpoint.id}`, { auth: tenant.key })).body.data;
    expect(state).to.include({ failure_count: 0, is_active: true });
    expect(state.last_success_at).to.be.a('string');
    expect(state.last_failure_at).to.be.a('string');
    const attempts = await call('GET', `/admin/webhooks/${endpoint.id}/attempts`, { auth: 'admin' });
    expect(attempts.status).to.equal(200);
    expect(attempts.body.data.map((a) => [a.attempt, a.succeeded, a.status_code])).to.deep.equal([
      [3, true, 200],
      [2, false, 500],
      [1, false, 500],
    ]);
  });

  it('gives a receiver that always fails exactly as many attempts as the schedule has, then abandons the delivery', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const endpoint = await subscribe(tenant, receiver);
    receiver.answerWith(503);
    await send(tenant);
    await waitUntil('the delivery settled', () => allSettled(endpoint.id, 1));
    expect(receiver.received).to.have.length(3);
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).to.include({ status: 'abandoned', attempts: 3 });
    expect((await call('GET', `/webhooks/${endpoint.id}`, { auth: tenant.key })).body.data).to.include({ failure_count: 1, is_active: true });
  });

  it('leaves an endpoint active after 24 abandoned deliveries and disables it at the 25th, abandoning what is pending', async function () {
    this.timeout(60_000);
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const endpoint = await subscribe(tenant, receiver, ['message.failed']);
    receiver.answerWith(500);
    const recipients = Array.from({ length: 24 }, (_, i) => `+1415555${String(2000 + i)}`);
    await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients, from: 'Dispatch', body: 'Hi' } });
    await waitUntil('24 deliveries abandoned', () => allSettled(endpoint.id, 24), 40_000);
    expect(receiver.received).to.have.length(72);
    const after24 = (await call('GET', `/webhooks/${endpoint.id}`, { auth: tenant.key })).body.data;
    expect(after24).to.include({ failure_count: 24, is_active: true, disabled_at: null });

    await send(tenant, 'The 25th');
    await waitUntil('the endpoint disabled', async () => !(await endpointRow(endpoint.id)).is_active);
    const state = (await call('GET', `/webhooks/${endpoint.id}`, { auth: tenant.key })).body.data;
    expect(state).to.include({ failure_count: 25, is_active: false });
    expect(state.disabled_at).to.be.a('string');
    expect(await harness.db('webhook_deliveries').where({ endpoint_id: endpoint.id, status: 'pending' })).to.have.length(0);

    // A disabled endpoint is given no delivery (they are written with the event); the operator can enable it again.
    const count = receiver.received.length;
    const whileDisabled = (await send(tenant, 'While disabled')).body.data;
    await waitUntil('the failure recorded', async () => (await harness.db('events').where({ message_id: whileDisabled.id })).length === 1);
    expect(await deliveriesOf(endpoint.id)).to.have.length(25);
    expect(receiver.received).to.have.length(count);
    const enabled = await call('POST', `/admin/webhooks/${endpoint.id}/enable`, { auth: 'admin' });
    expect(enabled.body.data).to.include({ is_active: true, failure_count: 0, disabled_at: null });
    receiver.answerWith(200);
    await send(tenant, 'After enabling');
    await receiver.waitFor((received) => received.some((d) => d.event.data.body === 'After enabling'));
  });

  it('cuts off a hanging receiver at the timeout, says why, and puts the endpoint on probation, while another endpoint gets its events', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const stuckTenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const stuck = await subscribe(stuckTenant, receiver);
    const healthy = await subscribe(tenant, other);
    receiver.answerWith('hang');
    await Promise.all(Array.from({ length: 3 }, () => send(stuckTenant, 'to the hanging one')));
    await receiver.waitFor((received) => received.length >= 1);
    await send(tenant, 'to the healthy one');
    await other.waitFor((received) => received.length >= 1);
    await waitUntil('a first attempt recorded', async () => (await attemptsOf(stuck.id)).length >= 1);
    const [attempt] = await attemptsOf(stuck.id);
    expect(attempt).to.include({ attempt: 1, succeeded: false, status_code: null, error: 'no answer within 1000 ms' });
    expect(await endpointRow(stuck.id)).to.include({ prompt_since: null });
    await waitUntil('the healthy delivery settled', () => allSettled(healthy.id, 1));
    expect((await attemptsOf(healthy.id)).map((a) => [a.attempt, a.succeeded])).to.deep.equal([[1, true]]);
    expect((await endpointRow(healthy.id)).prompt_since).to.be.an.instanceOf(Date);
  });

  it('sends nothing more to a deleted endpoint', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'delivered', dlr_delay_ms: 400 } }] });
    const endpoint = await subscribe(tenant, receiver);
    const message = (await send(tenant)).body.data;
    await receiver.waitFor((received) => received.length >= 1);
    await call('DELETE', `/webhooks/${endpoint.id}`, { auth: tenant.key });
    await waitForMessage(tenant, message.id, (m) => m.status === 'delivered');
    // A delivery written before the deletion is abandoned unattempted; none is written after it.
    await waitUntil('every delivery settled', () => allSettled(endpoint.id, 1));
    expect(receiver.received.map((d) => d.event.type)).to.deep.equal(['message.sent']);
    expect((await deliveriesOf(endpoint.id)).filter((d) => d.status === 'succeeded')).to.have.length(1);
  });
});
