import { expect } from 'chai';
import { verifyWebhook } from '../../sdk/webhooks.ts';
import { call, expectError } from '../support/client.ts';
import { endpointAt, stopReceivers, testEvent } from '../support/webhook-endpoints.ts';
import { createTenant, eventually, type Tenant } from '../support/fixtures.ts';
import { harness, TEST_WEBHOOK_ENV } from '../support/harness.ts';
import { deliveriesOf } from '../support/webhook-state.ts';

const UNKNOWN_ENDPOINT = 'whe_000000000000000000000000';
const UNKNOWN_EVENT = 'evt_000000000000000000000000';
/** Every attempt of a delivery in the tests' schedule (0,1,1): a delivery failing that often is abandoned. */
const ATTEMPTS = TEST_WEBHOOK_ENV.WEBHOOK_RETRY_SCHEDULE.split(',').length;

afterEach(stopReceivers);

const resend = (auth: string, endpointId: string, eventId: string) => call('POST', `/webhooks/${endpointId}/events/${eventId}/resend`, { auth });
const adminResend = (endpointId: string, eventId: string) => call('POST', `/admin/webhooks/${endpointId}/events/${eventId}/resend`, { auth: 'admin' });

/** The endpoint's attempts, newest first, as [event, attempt, succeeded, status], once there are `count`. */
async function attemptsOnceThere(tenant: Tenant, endpointId: string, count: number) {
  const listed = await eventually(
    () => call('GET', `/webhooks/${endpointId}/attempts`, { auth: tenant.key }),
    (response) => response.body.data.length >= count,
    { what: `${count} attempts`, timeoutMs: 20_000 },
  );
  return listed.body.data.map((attempt) => [attempt.event_id, attempt.attempt, attempt.succeeded, attempt.status_code]);
}

describe('POST /webhooks/{id}/events/{event_id}/resend', () => {
  it('delivers an abandoned event again, once the receiver answers: the same event, signed afresh, as a new delivery with attempts of its own', async () => {
    const tenant = await createTenant();
    // The receiver fails every attempt of the first delivery, then answers.
    const { receiver, id, secret } = await endpointAt(tenant, (index) => (index < ATTEMPTS ? 500 : 200));
    const eventId = await testEvent(tenant, id);
    await eventually(
      () => deliveriesOf(id),
      (deliveries) => deliveries.length === 1 && deliveries[0].status === 'abandoned',
      { what: 'the first delivery abandoned', timeoutMs: 20_000 },
    );
    expect((await call('GET', `/webhooks/${id}`, { auth: tenant.key })).body.data.failure_count).to.equal(1);

    const response = await resend(tenant.key, id, eventId);
    expect(response.status).to.equal(202);
    expect(response.body.data).to.deep.include({ object: 'webhook_resend', endpoint_id: id, event_id: eventId, event_type: 'webhook.test' });

    const attempts = await attemptsOnceThere(tenant, id, ATTEMPTS + 1);
    expect(attempts).to.deep.equal([[eventId, 1, true, 200], ...Array.from({ length: ATTEMPTS }, (_, index) => [eventId, ATTEMPTS - index, false, 500])]);
    expect((await deliveriesOf(id)).map((delivery) => delivery.status)).to.deep.equal(['abandoned', 'succeeded']);
    expect((await call('GET', `/webhooks/${id}`, { auth: tenant.key })).body.data.failure_count).to.equal(0);

    const [first, resent] = [receiver.received[0], receiver.received.at(-1)!];
    expect(resent.event).to.deep.equal(first.event);
    expect(verifyWebhook(resent.rawBody, String(resent.headers['dispatch-signature']), secret).id).to.equal(eventId);
  });

  it('resends an event to an endpoint that does not subscribe to its type, and only to that endpoint', async () => {
    const tenant = await createTenant();
    const source = await endpointAt(tenant);
    const target = await endpointAt(tenant, 200, ['message.failed']);
    const eventId = await testEvent(tenant, source.id);
    await source.receiver.waitFor((received) => received.length === 1);

    expect((await resend(tenant.key, target.id, eventId)).status).to.equal(202);
    await target.receiver.waitFor((received) => received.length === 1);
    expect(target.receiver.received[0].event.id).to.equal(eventId);
    expect(await attemptsOnceThere(tenant, target.id, 1)).to.deep.equal([[eventId, 1, true, 200]]);
    expect(source.receiver.received).to.have.length(1);
  });

  it("answers 404 for an unknown or another account's endpoint (id) and event (event_id), queueing nothing", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const own = await endpointAt(owner);
    const strangers = await endpointAt(stranger);
    const ownEvent = await testEvent(owner, own.id);
    const strangersEvent = await testEvent(stranger, strangers.id);
    await own.receiver.waitFor((received) => received.length === 1);

    expectError(await resend(owner.key, UNKNOWN_ENDPOINT, ownEvent), 404, 'resource_not_found', 'id');
    expectError(await resend(owner.key, strangers.id, ownEvent), 404, 'resource_not_found', 'id');
    expectError(await resend(owner.key, own.id, UNKNOWN_EVENT), 404, 'resource_not_found', 'event_id');
    const foreignEvent = await resend(owner.key, own.id, strangersEvent);
    expectError(foreignEvent, 404, 'resource_not_found', 'event_id');
    expect(foreignEvent.body.error.message).to.equal(
      (await resend(owner.key, own.id, UNKNOWN_EVENT)).body.error.message.replace(UNKNOWN_EVENT, strangersEvent),
    );
    expect(await deliveriesOf(own.id)).to.have.length(1);
  });

  it('answers 404 event_id for an event past the 30 days events are kept', async () => {
    const tenant = await createTenant();
    const { receiver, id } = await endpointAt(tenant);
    const eventId = await testEvent(tenant, id);
    await receiver.waitFor((received) => received.length === 1);
    await harness
      .db('events')
      .where({ id: eventId })
      .update({ created_at: new Date(Date.now() - 31 * 86_400_000) });
    expectError(await resend(tenant.key, id, eventId), 404, 'resource_not_found', 'event_id');
  });

  it('answers 409 invalid_state_transition for a disabled endpoint, queueing nothing, and resends once it is enabled', async () => {
    const tenant = await createTenant();
    const { receiver, id } = await endpointAt(tenant);
    const eventId = await testEvent(tenant, id);
    await receiver.waitFor((received) => received.length === 1);
    expect((await call('PATCH', `/webhooks/${id}`, { auth: tenant.key, body: { is_active: false } })).status).to.equal(200);
    expectError(await resend(tenant.key, id, eventId), 409, 'invalid_state_transition');
    expect(await deliveriesOf(id)).to.have.length(1);

    expect((await call('PATCH', `/webhooks/${id}`, { auth: tenant.key, body: { is_active: true } })).status).to.equal(200);
    expect((await resend(tenant.key, id, eventId)).status).to.equal(202);
    await receiver.waitFor((received) => received.length === 2);
  });

  it('answers 400 naming the path parameter whose percent-escape is not UTF-8', async () => {
    const tenant = await createTenant();
    const { id } = await endpointAt(tenant);
    expectError(await resend(tenant.key, id, '%FF'), 400, 'parameter_invalid', 'event_id');
    expectError(await resend(tenant.key, '%FF', UNKNOWN_EVENT), 400, 'parameter_invalid', 'id');
  });

  it('answers 403 to a key without webhooks:write', async () => {
    const tenant = await createTenant();
    const { id } = await endpointAt(tenant);
    const reader = await call('POST', '/api-keys/create', { auth: tenant.key, body: { name: 'Reader', permissions: ['webhooks:read'] } });
    const response = await resend(reader.body.data.plain_key, id, UNKNOWN_EVENT);
    expectError(response, 403, 'forbidden');
    expect(response.body.error.details).to.deep.equal({ required_scope: 'webhooks:write' });
  });
});

describe('POST /admin/webhooks/{id}/events/{event_id}/resend', () => {
  it("resends any account's event to its endpoint, and records it in the audit log", async () => {
    const tenant = await createTenant();
    const { receiver, id } = await endpointAt(tenant);
    const eventId = await testEvent(tenant, id);
    await receiver.waitFor((received) => received.length === 1);

    const response = await adminResend(id, eventId);
    expect(response.status).to.equal(202);
    expect(response.body.data).to.deep.include({ object: 'webhook_resend', endpoint_id: id, event_id: eventId, event_type: 'webhook.test' });
    await receiver.waitFor((received) => received.length === 2);
    expect(receiver.received[1].event.id).to.equal(eventId);

    const audit = await call('GET', `/admin/audit-log?action=event.resend&target_id=${eventId}`, { auth: 'admin' });
    expect(audit.body.data).to.have.length(1);
    expect(audit.body.data[0]).to.deep.include({ target_type: 'event', before: null, after: response.body.data });
  });

  it("answers 404 for an unknown endpoint or an event not of the endpoint's account, 409 for a disabled endpoint, 400 for a malformed id, auditing none", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const own = await endpointAt(owner);
    const strangers = await endpointAt(stranger);
    const strangersEvent = await testEvent(stranger, strangers.id);
    const ownEvent = await testEvent(owner, own.id);
    await own.receiver.waitFor((received) => received.length === 1);

    expectError(await adminResend(UNKNOWN_ENDPOINT, ownEvent), 404, 'resource_not_found', 'id');
    expectError(await adminResend(own.id, strangersEvent), 404, 'resource_not_found', 'event_id');
    expect((await call('PATCH', `/webhooks/${own.id}`, { auth: owner.key, body: { is_active: false } })).status).to.equal(200);
    expectError(await adminResend(own.id, ownEvent), 409, 'invalid_state_transition');
    expectError(await adminResend(own.id, '%FF'), 400, 'parameter_invalid', 'event_id');
    expect(await deliveriesOf(own.id)).to.have.length(1);
    for (const event of [ownEvent, strangersEvent]) {
      expect((await call('GET', `/admin/audit-log?target_id=${event}`, { auth: 'admin' })).body.data).to.deep.equal([]);
    }
  });
});
