import { expect } from 'chai';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/webhooks.ts';
import { call, expectError } from '../support/client.ts';
import { endpointAt, stopReceivers, testEvent } from '../support/webhook-endpoints.ts';
import { createTenant, eventually } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';
import type { ReceivedDelivery, WebhookReceiver } from '../support/webhook-receiver.ts';
import { endpointRow } from '../support/webhook-state.ts';

const UNKNOWN = 'whe_000000000000000000000000';
const NOWHERE = 'http://127.0.0.1:9/hooks';

afterEach(stopReceivers);

async function deliveryOf(receiver: WebhookReceiver, eventId: string): Promise<ReceivedDelivery> {
  await receiver.waitFor((received) => received.some((delivery) => delivery.event.id === eventId));
  return receiver.received.find((delivery) => delivery.event.id === eventId)!;
}

const signatureOf = (delivery: ReceivedDelivery): string => String(delivery.headers['dispatch-signature']);
const v1Count = (header: string): number => header.split(',').filter((item) => item.startsWith('v1=')).length;

function expectMismatch(delivery: ReceivedDelivery, secret: string): void {
  let thrown: unknown;
  try {
    verifyWebhook(delivery.rawBody, signatureOf(delivery), secret);
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'the delivery should not verify with this secret').to.be.instanceOf(WebhookVerificationError);
  expect((thrown as WebhookVerificationError).code).to.equal('signature_mismatch');
}

describe('POST /webhooks/{id}/test', () => {
  it('answers 202 with a webhook.test event delivered, signed, to this endpoint only, whatever it subscribed to', async () => {
    const tenant = await createTenant();
    const target = await endpointAt(tenant, 200, ['message.failed']);
    const other = await endpointAt(tenant);
    const response = await call('POST', `/webhooks/${target.id}/test`, { auth: tenant.key });
    expect(response.status).to.equal(202);
    const event = response.body.data;
    expect(event).to.deep.include({ object: 'event', type: 'webhook.test', data: { object: 'webhook_test', endpoint_id: target.id } });

    const delivery = await deliveryOf(target.receiver, event.id);
    expect(verifyWebhook(delivery.rawBody, signatureOf(delivery), target.secret)).to.deep.equal(event);
    expect(await harness.db('webhook_deliveries').where({ event_id: event.id }).pluck('endpoint_id')).to.deep.equal([target.id]);
    expect(other.receiver.received).to.have.length(0);
  });

  it('leaves test events out of GET /events unless asked for by name', async () => {
    const tenant = await createTenant();
    const { id } = await endpointAt(tenant);
    const eventId = await testEvent(tenant, id);
    expect((await call('GET', '/events', { auth: tenant.key })).body.data).to.deep.equal([]);
    expect((await call('GET', '/events?type=*', { auth: tenant.key })).body.data).to.deep.equal([]);
    const named = await call('GET', '/events?type=webhook.test', { auth: tenant.key });
    expect(named.body.data.map((e: { id: string }) => e.id)).to.deep.equal([eventId]);
    expect(named.body.pagination.total).to.equal(1);
  });

  it('answers 409 invalid_state_transition for a disabled endpoint, recording nothing', async () => {
    const tenant = await createTenant();
    const { id } = await endpointAt(tenant);
    expect((await call('PATCH', `/webhooks/${id}`, { auth: tenant.key, body: { is_active: false } })).status).to.equal(200);
    expectError(await call('POST', `/webhooks/${id}/test`, { auth: tenant.key }), 409, 'invalid_state_transition');
    expect(await harness.db('events').where({ account_id: tenant.accountId })).to.have.length(0);
  });

  it('answers 400 naming id for a path id whose percent-escape is not UTF-8', async () => {
    const tenant = await createTenant();
    expectError(await call('POST', '/webhooks/%FF/test', { auth: tenant.key }), 400, 'parameter_invalid', 'id');
  });

  it("answers 404 for an unknown endpoint and another account's", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const { id } = await endpointAt(owner);
    expectError(await call('POST', `/webhooks/${UNKNOWN}/test`, { auth: owner.key }), 404, 'resource_not_found', 'id');
    expectError(await call('POST', `/webhooks/${id}/test`, { auth: stranger.key }), 404, 'resource_not_found', 'id');
    expect(await harness.db('events').whereIn('account_id', [owner.accountId, stranger.accountId])).to.have.length(0);
  });
});

describe('GET /webhooks/{id}/attempts', () => {
  it("lists the endpoint's attempts newest first, paged, by event and by outcome", async () => {
    const tenant = await createTenant();
    // The first attempt fails; its retry (1 s later in tests) and everything after succeed.
    const { receiver, id } = await endpointAt(tenant, (index) => (index === 0 ? 503 : 200));
    const first = await testEvent(tenant, id);
    await receiver.waitFor((received) => received.length === 2);
    const second = await testEvent(tenant, id);
    const all = await eventually(
      () => call('GET', `/webhooks/${id}/attempts`, { auth: tenant.key }),
      (listed) => listed.body.data.length === 3,
      { what: 'three attempts' },
    );
    expect(all.status).to.equal(200);
    expect(all.body.data.map((a) => [a.event_id, a.attempt, a.succeeded, a.status_code])).to.deep.equal([
      [second, 1, true, 200],
      [first, 2, true, 200],
      [first, 1, false, 503],
    ]);
    expect(all.body.data[2]).to.deep.include({ object: 'webhook_attempt', endpoint_id: id, error: 'HTTP 503' });
    expect(all.body.pagination).to.deep.equal({ page: 1, limit: 50, total: 3, pages: 1, has_more: false });

    const ofFirst = await call('GET', `/webhooks/${id}/attempts?event_id=${first}`, { auth: tenant.key });
    expect(ofFirst.body.data.map((a) => a.attempt)).to.deep.equal([2, 1]);
    const failed = await call('GET', `/webhooks/${id}/attempts?succeeded=false`, { auth: tenant.key });
    expect(failed.body.data.map((a) => [a.event_id, a.attempt])).to.deep.equal([[first, 1]]);
    expect(failed.body.pagination.total).to.equal(1);
    const succeededOfFirst = await call('GET', `/webhooks/${id}/attempts?event_id=${first}&succeeded=true`, { auth: tenant.key });
    expect(succeededOfFirst.body.data.map((a) => a.attempt)).to.deep.equal([2]);
    const secondPage = await call('GET', `/webhooks/${id}/attempts?limit=2&page=2`, { auth: tenant.key });
    expect(secondPage.body.data.map((a) => [a.event_id, a.attempt])).to.deep.equal([[first, 1]]);
    expect(secondPage.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, pages: 2, has_more: false });
  });

  const invalid: [string, string, string][] = [
    ['an event id without its prefix', 'event_id=12345', 'event_id'],
    ['an outcome that is not a boolean', 'succeeded=maybe', 'succeeded'],
    ['a page size of 0', 'limit=0', 'limit'],
  ];
  for (const [what, query, param] of invalid) {
    it(`answers 400 naming ${param} for ${what}`, async () => {
      const tenant = await createTenant();
      const created = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: NOWHERE } });
      expectError(await call('GET', `/webhooks/${created.body.data.id}/attempts?${query}`, { auth: tenant.key }), 400, 'parameter_invalid', param);
    });
  }

  it("answers 404 for an unknown endpoint and another account's", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const created = await call('POST', '/webhooks/create', { auth: owner.key, body: { url: NOWHERE } });
    expectError(await call('GET', `/webhooks/${UNKNOWN}/attempts`, { auth: owner.key }), 404, 'resource_not_found', 'id');
    expectError(await call('GET', `/webhooks/${created.body.data.id}/attempts`, { auth: stranger.key }), 404, 'resource_not_found', 'id');
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  it("keeps deliveries verifiable by both secrets during the grace period, checked with the SDK's verifier, and by the new one only after it", async () => {
    const tenant = await createTenant();
    const { receiver, id, secret: original } = await endpointAt(tenant);
    const rotated = await call('POST', `/webhooks/${id}/rotate-secret`, { auth: tenant.key, body: { expires_in_seconds: 3600 } });
    expect(rotated.status).to.equal(200);
    const fresh = rotated.body.data.signing_secret;
    expect(fresh)
      .to.match(/^whsec_[0-9A-Za-z]{43}$/)
      .and.not.equal(original);
    const expiresAt = Date.parse(rotated.body.data.previous_secret_expires_at!);
    expect(expiresAt - Date.now()).to.be.within(3_500_000, 3_700_000);
    expect((await call('GET', `/webhooks/${id}`, { auth: tenant.key })).body.data).to.not.have.property('signing_secret');

    // During the grace period: two v1 signatures, either secret verifies.
    const during = await deliveryOf(receiver, await testEvent(tenant, id));
    expect(v1Count(signatureOf(during))).to.equal(2);
    expect(verifyWebhook(during.rawBody, signatureOf(during), fresh).type).to.equal('webhook.test');
    expect(verifyWebhook(during.rawBody, signatureOf(during), original).type).to.equal('webhook.test');

    // The grace period over (moved into the past rather than waited out): the new secret only.
    await harness
      .db('webhook_endpoints')
      .where({ id })
      .update({ previous_secret_expires_at: new Date(Date.now() - 1000) });
    const after = await deliveryOf(receiver, await testEvent(tenant, id));
    expect(v1Count(signatureOf(after))).to.equal(1);
    expect(verifyWebhook(after.rawBody, signatureOf(after), fresh).type).to.equal('webhook.test');
    expectMismatch(after, original);
  });

  it('ends the replaced secret at once with expires_in_seconds 0, and a new rotation drops the secret before', async () => {
    const tenant = await createTenant();
    const { receiver, id, secret: original } = await endpointAt(tenant);
    const first = (await call('POST', `/webhooks/${id}/rotate-secret`, { auth: tenant.key })).body.data;
    // Omitted, the grace period is a day.
    expect(Date.parse(first.previous_secret_expires_at!) - Date.now()).to.be.within(86_300_000, 86_500_000);
    const second = await call('POST', `/webhooks/${id}/rotate-secret`, { auth: tenant.key, body: { expires_in_seconds: 0 } });
    expect(second.status).to.equal(200);
    expect(second.body.data.previous_secret_expires_at).to.equal(null);

    const delivery = await deliveryOf(receiver, await testEvent(tenant, id));
    expect(v1Count(signatureOf(delivery))).to.equal(1);
    expect(verifyWebhook(delivery.rawBody, signatureOf(delivery), second.body.data.signing_secret).type).to.equal('webhook.test');
    expectMismatch(delivery, first.signing_secret);
    expectMismatch(delivery, original);
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a grace period over a week', { expires_in_seconds: 604_801 }, 'parameter_invalid', 'expires_in_seconds'],
    ['a negative grace period', { expires_in_seconds: -1 }, 'parameter_invalid', 'expires_in_seconds'],
    ['a grace period that is not an integer', { expires_in_seconds: 1.5 }, 'parameter_invalid', 'expires_in_seconds'],
    ['an unknown field', { secret: 'whsec_mine' }, 'parameter_unknown', 'secret'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}, keeping the secret`, async () => {
      const tenant = await createTenant();
      const created = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: NOWHERE } })).body.data;
      expectError(await call('POST', `/webhooks/${created.id}/rotate-secret`, { auth: tenant.key, body }), 400, code, param);
      expect(await endpointRow(created.id)).to.deep.include({ signing_secret: created.signing_secret, previous_signing_secret: null });
    });
  }

  it("answers 404 for an unknown endpoint and another account's, keeping the secret", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const created = (await call('POST', '/webhooks/create', { auth: owner.key, body: { url: NOWHERE } })).body.data;
    expectError(await call('POST', `/webhooks/${UNKNOWN}/rotate-secret`, { auth: owner.key, body: {} }), 404, 'resource_not_found', 'id');
    expectError(await call('POST', `/webhooks/${created.id}/rotate-secret`, { auth: stranger.key, body: {} }), 404, 'resource_not_found', 'id');
    expect((await endpointRow(created.id)).signing_secret).to.equal(created.signing_secret);
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('changes the URL, the subscription and the description, keeping what is left out', async () => {
    const tenant = await createTenant();
    const created = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: NOWHERE, description: 'Old' } })).body.data;
    const response = await call('PATCH', `/webhooks/${created.id}`, {
      auth: tenant.key,
      body: { url: `${NOWHERE}/v2`, events: ['message.delivered', 'recipient.opted_out'] },
    });
    expect(response.status).to.equal(200);
    const { signing_secret: _secret, ...shown } = created;
    expect(response.body.data).to.deep.equal({ ...shown, url: `${NOWHERE}/v2`, events: ['message.delivered', 'recipient.opted_out'] });
    const cleared = await call('PATCH', `/webhooks/${created.id}`, { auth: tenant.key, body: { description: null } });
    expect(cleared.body.data).to.deep.include({ description: null, url: `${NOWHERE}/v2` });
    expect((await call('GET', `/webhooks/${created.id}`, { auth: tenant.key })).body.data).to.deep.equal(cleared.body.data);
  });

  it("disables an endpoint, abandoning its pending deliveries, and enables it again with the operator's rules", async () => {
    const tenant = await createTenant();
    const { receiver, id } = await endpointAt(tenant, 'hang');
    const pending = await testEvent(tenant, id);
    await receiver.waitFor((received) => received.length === 1);
    const disabled = await call('PATCH', `/webhooks/${id}`, { auth: tenant.key, body: { is_active: false } });
    expect(disabled.status).to.equal(200);
    expect(disabled.body.data.is_active).to.equal(false);
    expect(disabled.body.data.disabled_at).to.be.a('string');
    expect(await harness.db('webhook_deliveries').where({ event_id: pending }).pluck('status')).to.deep.equal(['abandoned']);

    await harness.db('webhook_endpoints').where({ id }).update({ failure_count: 7 });
    const enabled = await call('PATCH', `/webhooks/${id}`, { auth: tenant.key, body: { is_active: true } });
    expect(enabled.body.data).to.deep.include({ is_active: true, failure_count: 0, disabled_at: null });
  });

  const invalid: [string, Record<string, unknown>, string, string | undefined][] = [
    ['no field at all', {}, 'parameter_invalid', undefined],
    ['a relative url', { url: '/hooks' }, 'parameter_invalid', 'url'],
    ['an unknown event type', { events: ['message.read'] }, 'parameter_invalid', 'events[0]'],
    ['no event types', { events: [] }, 'parameter_invalid', 'events'],
    ['a subscription to test events', { events: ['webhook.test'] }, 'parameter_invalid', 'events[0]'],
    ['an is_active that is not a boolean', { is_active: 'yes' }, 'parameter_invalid', 'is_active'],
    ['an unknown field', { enabled: true }, 'parameter_unknown', 'enabled'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}, changing nothing`, async () => {
      const tenant = await createTenant();
      const created = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: NOWHERE } })).body.data;
      const before = await endpointRow(created.id);
      expectError(await call('PATCH', `/webhooks/${created.id}`, { auth: tenant.key, body }), 400, code, param);
      expect(await endpointRow(created.id)).to.deep.equal(before);
    });
  }

  it('refuses a URL on a private address unless the operator allows them, changing nothing', async function () {
    // A second Dispatch (pg-boss, workers) may take seconds to start on a busy machine.
    this.timeout(60_000);
    const strict = await startInstance(harness.database.url, { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
    try {
      const tenant = await createTenant();
      const created = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: 'https://example.com/hooks' } })).body.data;
      const response = await call('PATCH', `/webhooks/${created.id}`, {
        auth: tenant.key,
        baseUrl: strict.baseUrl,
        body: { url: 'http://169.254.169.254/latest', is_active: false },
      });
      expectError(response, 400, 'parameter_invalid', 'url');
      expect(await endpointRow(created.id)).to.deep.include({ url: 'https://example.com/hooks', is_active: true });
    } finally {
      await strict.stop();
    }
  });

  it("answers 404 for an unknown endpoint and another account's, changing nothing", async () => {
    const [owner, stranger] = [await createTenant(), await createTenant()];
    const created = (await call('POST', '/webhooks/create', { auth: owner.key, body: { url: NOWHERE } })).body.data;
    expectError(await call('PATCH', `/webhooks/${UNKNOWN}`, { auth: owner.key, body: { description: 'x' } }), 404, 'resource_not_found', 'id');
    expectError(await call('PATCH', `/webhooks/${created.id}`, { auth: stranger.key, body: { is_active: false } }), 404, 'resource_not_found', 'id');
    expect(await endpointRow(created.id)).to.deep.include({ is_active: true, description: null });
  });
});
