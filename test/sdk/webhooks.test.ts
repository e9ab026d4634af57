import { expect } from 'chai';
import { signPayload } from '../../sdk/webhook-signature.ts';
import { isKnownEvent, verifyWebhook, WebhookVerificationError, type Event, type KnownEvent } from '../../sdk/index.ts';

const SECRET = 'whsec_test_0123456789abcdefghijklmnopqrstuv';
const now = () => Math.floor(Date.now() / 1000);

const event: Event = {
  id: 'evt_sCq0YP1SE6qBUhU76ESWGWVb',
  object: 'event',
  type: 'message.delivered',
  created_at: '2025-11-21T14:03:29.004Z',
  data: {
    id: 'msg_sCq0YP1SE6qBUhU76ESWGWVb',
    object: 'message',
    to: '+14155550123',
    from: 'Dispatch',
    body: 'Hello',
    status: 'delivered',
    cost: 0.0075,
    currency: 'USD',
    route_id: 3,
    provider_message_id: 'sim-1',
    attempts: 1,
    error: null,
    reference: 'order-1',
    segments: 1,
    encoding: 'GSM-7',
    created_at: '2025-11-21T14:03:27.512Z',
    sent_at: '2025-11-21T14:03:27.700Z',
    delivered_at: '2025-11-21T14:03:29.004Z',
    failed_at: null,
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
    expect(isKnownEvent(verified)).to.equal(true);
    if (!isKnownEvent(verified) || verified.type !== 'message.delivered') throw new Error(`not a known message.delivered: ${verified.type}`);
    expect(verified.data.reference).to.equal('order-1');
    expect(verifyWebhook(Buffer.from(rawBody, 'utf8'), header, SECRET, { toleranceSeconds: 10 })).to.deep.equal(event);
  });

  it('answers the events of issue 10 typed by their type: message.received, recipient.opted_out, recipient.opted_in', () => {
    const optOut = { number: '+14155550123', object: 'opt_out', source: 'keyword', reason: null, keyword: 'STOP', created_at: '2025-11-21T16:45:10.004Z' };
    const inbound = {
      id: 'inb_Q2mXb7RkTz0YcVhL4sNfWd8E',
      object: 'inbound_message',
      from: '+14155550123',
      to: '+12127000100',
      body: 'Stop',
      encoding: 'GSM-7',
      segments: 1,
      complete: true,
      keyword: 'STOP',
      route_id: 1,
      received_at: '2025-11-21T16:45:10.001Z',
    };
    const envelope = { object: 'event', created_at: '2025-11-21T16:45:10.004Z' };
    const events = [
      { ...envelope, id: 'evt_000000000000000000000001', type: 'message.received', data: inbound },
      { ...envelope, id: 'evt_000000000000000000000002', type: 'recipient.opted_out', data: optOut },
      { ...envelope, id: 'evt_000000000000000000000003', type: 'recipient.opted_in', data: optOut },
      {
        ...envelope,
        id: 'evt_000000000000000000000004',
        type: 'balance.low',
        data: { account_id: 'acct_a46ccYTWX8yPOWEaTcjcZMKA', balance: 4.99, threshold: 5, currency: 'USD' },
      },
    ];
    /** What a receiver's switch reads; a type without a case would not compile (`never`). */
    const summary = (verified: KnownEvent): string => {
      switch (verified.type) {
        case 'message.received':
          return `${verified.data.from} said ${verified.data.body} (${verified.data.keyword})`;
        case 'recipient.opted_out':
        case 'recipient.opted_in':
          return `${verified.data.number} by ${verified.data.source} ${verified.data.keyword}`;
        case 'message.sent':
        case 'message.delivered':
        case 'message.failed':
          return `${verified.data.id} ${verified.data.status}`;
        case 'balance.low':
          return `${verified.data.balance} ${verified.data.currency} below ${verified.data.threshold}`;
        default:
          return verified satisfies never;
      }
    };
    const summaries = events.map((sent) => {
      const body = JSON.stringify(sent);
      const verified = verifyWebhook(body, signPayload(body, SECRET, now()), SECRET);
      expect(verified).to.deep.equal(sent);
      if (!isKnownEvent(verified)) throw new Error(`${verified.type} should be known`);
      return summary(verified);
    });
    expect(summaries).to.deep.equal(['+14155550123 said Stop (STOP)', '+14155550123 by keyword STOP', '+14155550123 by keyword STOP', '4.99 USD below 5']);
  });

  it('answers an event of a type it does not know, authentic, as an open-set event (receivers may ignore it)', () => {
    const future = {
      id: 'evt_000000000000000000000004',
      object: 'event',
      type: 'number.ported',
      created_at: '2025-11-21T16:45:10.004Z',
      data: { number: '+14155550123', carrier: 'Acme' },
    };
    const body = JSON.stringify(future);
    const verified: Event = verifyWebhook(body, signPayload(body, SECRET, now()), SECRET);
    expect(verified).to.deep.equal(future);
    expect(isKnownEvent(verified)).to.equal(false);
    expect(verified.type).to.equal('number.ported');
    // Still authenticated: a forged one of an unknown type is refused like any other.
    expectVerificationError(() => verifyWebhook(body.replace('Acme', 'Evil'), signPayload(body, SECRET, now()), SECRET), 'signature_mismatch');
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
    for (const body of [
      'not json',
      '[]',
      JSON.stringify({ ...event, object: 'message' }),
      JSON.stringify({ id: 'x', object: 'event' }),
      JSON.stringify({ ...event, data: [] }),
    ]) {
      expectVerificationError(() => verifyWebhook(body, signPayload(body, SECRET, now()), SECRET), 'invalid_payload');
    }
  });
});
