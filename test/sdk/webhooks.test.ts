import { expect } from 'chai';
import { signPayload } from '../../domain/webhook-signature.ts';
import { verifyWebhook, WebhookVerificationError, type Event } from '../../sdk/index.ts';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const now = () => Math.floor(Date.now() / 1000);

const event: Event = {
  id: 'evt_sCq0YP1SE6qBUhU76ESWGWVb',
  object: 'event',
  type: 'message.delivered',
  created_at: '2025-11-21T14:03:29.004Z',
  data: {
    id: 'msg_sCq0YP1SE6qBUhU76ESWGWVb', object: 'message', to: '+14155550123', from: 'Dispatch', body: 'Hello', status: 'delivered',
    cost: 0.0075, currency: 'USD', route_id: 3, provider_message_id: 'sim-1', attempts: 1, error: null, reference: 'order-1',
    segments: 1, encoding: 'GSM-7', created_at: '2025-11-21T14:03:27.512Z', sent_at: '2025-11-21T14:03:27.700Z',
    delivered_at: '2025-11-21T14:03:29.004Z', failed_at: null,
  },
};
const rawBody = JSON.stringify(event);

function expectVerificationError(run: () => unknown, code: string): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, 'verifyWebhook should have thrown').to.be.instanceOf(WebhookVerificationError);
  expect((thrown as WebhookVerificationError).code).to.equal(code);
}

describe('SDK verifyWebhook', () => {
  it('answers the typed event of a validly signed delivery, from a string or a Buffer', () => {
    const header = signPayload(rawBody, SECRET, now());
    const verified = verifyWebhook(rawBody, header, SECRET);
    expect(verified).to.deep.equal(event);
    expect(verified.type).to.equal('message.delivered');
    expect(verified.data.reference).to.equal('order-1');
    expect(verifyWebhook(Buffer.from(rawBody, 'utf8'), header, SECRET, { toleranceSeconds: 10 })).to.deep.equal(event);
  });

  it('throws on a tampered body, a wrong secret or a missing header', () => {
    const header = signPayload(rawBody, SECRET, now());
    expectVerificationError(() => verifyWebhook(rawBody.replace('order-1', 'order-2'), header, SECRET), 'signature_mismatch');
    expectVerificationError(() => verifyWebhook(rawBody, header, `${SECRET}x`), 'signature_mismatch');
    expectVerificationError(() => verifyWebhook(rawBody, undefined, SECRET), 'missing_header');
    expectVerificationError(() => verifyWebhook(rawBody, 'nonsense', SECRET), 'malformed_header');
  });

  it('throws on a timestamp older than the tolerance', () => {
    const header = signPayload(rawBody, SECRET, now() - 120);
    expect(verifyWebhook(rawBody, header, SECRET).id).to.equal(event.id);
    expectVerificationError(() => verifyWebhook(rawBody, header, SECRET, { toleranceSeconds: 60 }), 'timestamp_out_of_tolerance');
    expectVerificationError(() => verifyWebhook(rawBody, signPayload(rawBody, SECRET, now() - 3600), SECRET), 'timestamp_out_of_tolerance');
  });

  it('throws on an authentic body that is not an event', () => {
    for (const body of ['not json', '[]', JSON.stringify({ ...event, object: 'message' }), JSON.stringify({ id: 'x', object: 'event' })]) {
      expectVerificationError(() => verifyWebhook(body, signPayload(body, SECRET, now()), SECRET), 'invalid_payload');
    }
  });
});
