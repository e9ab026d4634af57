import { expect } from 'chai';
import { jobQueueOf, QUEUES } from '../../db/queues.ts';
import { insertDeliveries, type DeliveryRow } from '../../db/webhooks.ts';
import { reconcileWebhookDeliveries, recordWebhookAttempt } from '../../domain/webhook-deliveries.ts';
import { call } from '../support/client.ts';
import { sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { attemptsOf, deliveriesOf, endpointRow, waitUntil } from '../support/webhook-state.ts';

const RULES = { retrySchedule: [0, 1, 1], disableAfter: 25 };
/** A schedule whose retries are an hour away, so that a retry job sits waiting while the test removes it. */
const DISTANT_RETRIES = { retrySchedule: [0, 3600, 3600], disableAfter: 25, timeoutMs: 1000 };
/** What the reconciler sees a minute from now: every delivery written by the test is past the grace. */
const aMinuteLater = () => new Date(Date.now() + 60_000);

const jobsOf = (deliveryId: number) =>
  harness
    .db('pgboss.job')
    .where({ name: QUEUES.deliverWebhook.name })
    .whereRaw("data->>'delivery_id' = ?", [String(deliveryId)]);

describe('reconcileWebhookDeliveries', function () {
  this.timeout(30_000);
  let receiver: WebhookReceiver;

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
  });

  /** A pending delivery of a real event to a real endpoint, written without any job: as if its job had been lost. */
  async function strandedDelivery(): Promise<{ delivery: DeliveryRow; endpointId: string }> {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const message = (await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Stranded' } })).body.data;
    await waitForMessage(tenant, message.id, (m) => m.status === 'failed');
    // Subscribed after the event, so that no delivery (and no job) was written with it.
    const endpoint = (await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url } })).body.data;
    const event = await harness.db('events').where({ message_id: message.id }).first();
    const [delivery] = await insertDeliveries(harness.db, [{ endpoint_id: endpoint.id, event_id: event.id }]);
    return { delivery, endpointId: endpoint.id };
  }

  it('gives a delivery whose retry job was lost its next attempt, which the workers then make', async () => {
    const jobs = jobQueueOf(harness.dispatch.boss);
    const { delivery, endpointId } = await strandedDelivery();
    await recordWebhookAttempt(harness.db, jobs, DISTANT_RETRIES, delivery.id, 1, { ok: false, statusCode: 503, error: 'HTTP 503', durationMs: 5 });
    expect(await jobsOf(delivery.id).whereIn('state', ['created', 'retry'])).to.have.length(1);
    await jobsOf(delivery.id).delete();

    const settled = await reconcileWebhookDeliveries(harness.db, jobs, RULES, aMinuteLater());
    expect(settled.requeued).to.be.at.least(1);
    await receiver.waitFor((received) => received.length >= 1);
    await waitUntil('the delivery settled', async () => (await deliveriesOf(endpointId))[0].status !== 'pending');
    expect((await deliveriesOf(endpointId))[0]).to.include({ status: 'succeeded', attempts: 2 });
    expect((await attemptsOf(endpointId)).map((a) => [a.attempt, a.succeeded])).to.deep.equal([
      [1, false],
      [2, true],
    ]);
  });

  it('abandons a stranded delivery that has no attempt left, and counts it against its endpoint', async () => {
    const jobs = jobQueueOf(harness.dispatch.boss);
    const { delivery, endpointId } = await strandedDelivery();
    await harness.db('webhook_deliveries').where({ id: delivery.id }).update({ attempts: RULES.retrySchedule.length });

    const settled = await reconcileWebhookDeliveries(harness.db, jobs, RULES, aMinuteLater());
    expect(settled.abandoned).to.be.at.least(1);
    const [after] = await deliveriesOf(endpointId);
    expect(after).to.include({ status: 'abandoned', attempts: RULES.retrySchedule.length });
    expect(after.finished_at).to.be.an.instanceOf(Date);
    expect(await endpointRow(endpointId)).to.include({ failure_count: 1, is_active: true });
    expect(await jobsOf(delivery.id)).to.have.length(0);
    expect(receiver.received).to.have.length(0);
  });

  it('disables the endpoint when the abandoned delivery is its last allowed failure', async () => {
    const jobs = jobQueueOf(harness.dispatch.boss);
    const { delivery, endpointId } = await strandedDelivery();
    await harness.db('webhook_deliveries').where({ id: delivery.id }).update({ attempts: RULES.retrySchedule.length });
    await harness.db('webhook_endpoints').where({ id: endpointId }).update({ failure_count: 24 });

    await reconcileWebhookDeliveries(harness.db, jobs, RULES, aMinuteLater());
    expect(await endpointRow(endpointId)).to.include({ failure_count: 25, is_active: false });
  });

  it('leaves alone a delivery whose job is waiting, and a stranded one younger than the grace', async () => {
    const jobs = jobQueueOf(harness.dispatch.boss);
    const waiting = await strandedDelivery();
    await recordWebhookAttempt(harness.db, jobs, DISTANT_RETRIES, waiting.delivery.id, 1, { ok: false, statusCode: 503, error: 'HTTP 503', durationMs: 5 });

    await reconcileWebhookDeliveries(harness.db, jobs, RULES, aMinuteLater());
    expect(await jobsOf(waiting.delivery.id)).to.have.length(1);
    expect((await deliveriesOf(waiting.endpointId))[0]).to.include({ status: 'pending', attempts: 1 });

    await jobsOf(waiting.delivery.id).delete();
    const young = await strandedDelivery();
    // Both are stranded now, but written moments ago.
    await reconcileWebhookDeliveries(harness.db, jobs, RULES, new Date());
    expect(await jobsOf(waiting.delivery.id)).to.have.length(0);
    expect(await jobsOf(young.delivery.id)).to.have.length(0);
    expect((await deliveriesOf(young.endpointId))[0]).to.include({ status: 'pending', attempts: 0 });
  });
});
