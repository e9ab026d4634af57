import { expect } from 'chai';
import { call } from '../support/client.ts';
import { receivingEndpoint, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { TEST_WEBHOOK_ENV } from '../support/harness.ts';
import { WebhookReceiver, type Answer } from '../support/webhook-receiver.ts';
import { allSettled, attemptsOf, deliveriesOf, endpointRow, waitUntil } from '../support/webhook-state.ts';

const SCHEDULE = TEST_WEBHOOK_ENV.WEBHOOK_RETRY_SCHEDULE.split(',').map(Number);
const recipients = (count: number, from: number) => Array.from({ length: count }, (_, i) => `+1415555${String(from + i)}`);

/**
 * Receiver faults, the answer that plays each, how its every attempt is recorded, and whether
 * the endpoint ends on probation (its attempts held a worker for the deadline) or not.
 */
const FAULTS: Array<{ fault: string; answer: Answer; statusCode: number | null; error: string | RegExp; probation: boolean }> = [
  { fault: 'hangs', answer: 'hang', statusCode: null, error: 'no answer within 1000 ms', probation: true },
  { fault: 'answers 302', answer: 302, statusCode: 302, error: 'redirect (302) not followed', probation: false },
  { fault: 'answers 410', answer: 410, statusCode: 410, error: 'HTTP 410', probation: false },
  { fault: 'closes the connection mid-body', answer: 'close-mid-body', statusCode: 200, error: /^response interrupted/, probation: false },
  { fault: 'answers after the deadline', answer: { status: 200, afterMs: 1500 }, statusCode: null, error: 'no answer within 1000 ms', probation: true },
  {
    fault: 'sends its headers and stalls the body',
    answer: 'stall',
    statusCode: 200,
    error: 'no answer within 1000 ms (status 200 received, body unfinished)',
    probation: true,
  },
];

describe('webhook receiver faults', function () {
  this.timeout(60_000);
  const receivers: WebhookReceiver[] = [];

  afterEach(async () => {
    while (receivers.length > 0) await receivers.pop()!.stop();
  });

  async function endpoint(tenant: Tenant, answer: Answer): Promise<{ receiver: WebhookReceiver; id: string }> {
    const made = await receivingEndpoint(tenant, answer);
    receivers.push(made.receiver);
    return made;
  }

  const bulk = async (tenant: Tenant, count: number, from: number) =>
    expect(
      (await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients: recipients(count, from), from: 'Dispatch', body: 'Hi' } })).status,
    ).to.equal(201);

  it("ends each fault in an abandoned delivery after every attempt of the schedule, while another account's endpoint gets its events on the first attempt", async () => {
    const faulty = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const endpoints = await Promise.all(FAULTS.map(({ answer }) => endpoint(faulty, answer)));
    await bulk(faulty, 1, 4000);
    const other = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const healthy = await endpoint(other, 200);
    await bulk(other, 5, 4100);

    await waitUntil('the healthy deliveries settled', () => allSettled(healthy.id, 5));
    expect((await attemptsOf(healthy.id)).map((a) => [a.attempt, a.succeeded])).to.deep.equal(Array.from({ length: 5 }, () => [1, true]));
    // The faulty endpoints are still being retried: the healthy one waited for none of their schedules.
    const stillPending = await Promise.all(endpoints.map(async ({ id }) => !(await allSettled(id, 1))));
    expect(stillPending.filter(Boolean).length).to.be.above(0);

    await waitUntil('every faulty delivery settled', async () => (await Promise.all(endpoints.map(({ id }) => allSettled(id, 1)))).every(Boolean), 40_000);
    for (const [index, { fault, statusCode, error, probation }] of FAULTS.entries()) {
      const { id, receiver } = endpoints[index];
      const [delivery] = await deliveriesOf(id);
      expect(delivery, fault).to.include({ status: 'abandoned', attempts: SCHEDULE.length });
      const attempts = await attemptsOf(id);
      expect(
        attempts.map((a) => [a.attempt, a.succeeded, a.status_code]),
        fault,
      ).to.deep.equal(SCHEDULE.map((_, n) => [n + 1, false, statusCode]));
      for (const attempt of attempts)
        expect(attempt.error, fault).to.match(typeof error === 'string' ? new RegExp(`^${error.replace(/[()]/g, '\\$&')}$`) : error);
      // Each retry came no sooner than its place in the schedule after the attempt before it had begun.
      expect(receiver.received, fault).to.have.length(SCHEDULE.length);
      for (let n = 1; n < SCHEDULE.length; n++) {
        expect(receiver.received[n].receivedAt - receiver.received[n - 1].receivedAt, `${fault}: attempt ${n + 1}`).to.be.at.least(SCHEDULE[n] * 1000);
      }
      const row = await endpointRow(id);
      expect(row, fault).to.include({ failure_count: 1, is_active: true });
      expect(row.prompt_since === null, `${fault}: on probation`).to.equal(probation);
    }
  });

  it('counts an answer slower than half the deadline as a success, and keeps the endpoint on probation until an answer is prompt', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const { id, receiver } = await endpoint(tenant, { status: 204, afterMs: 700 });
    await bulk(tenant, 2, 4200);
    await waitUntil('the slow deliveries settled', () => allSettled(id, 2));
    expect((await deliveriesOf(id)).map((d) => [d.status, d.attempts])).to.deep.equal([
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    expect(await endpointRow(id)).to.include({ failure_count: 0, prompt_since: null });

    receiver.answerWith(204);
    await bulk(tenant, 1, 4300);
    await waitUntil('the prompt delivery settled', () => allSettled(id, 3));
    expect((await endpointRow(id)).prompt_since).to.be.an.instanceOf(Date);
  });
});
