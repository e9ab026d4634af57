import { expect } from 'chai';
import { signPayload } from '../../sdk/webhook-signature.ts';
import { verifyWebhook, WebhookVerificationError } from '../../sdk/index.ts';

// During a secret's rotation Dispatch signs each delivery with the new and the old secret
// (`t=...,v1=<new>,v1=<old>`), as Stripe does; a receiver holding either must accept it.

const OLD = 'whsec_old0123456789abcdefghijklmnopqrstuvwxyzABCD';
const NEW = 'whsec_new0123456789abcdefghijklmnopqrstuvwxyzABCD';
const OTHER = 'whsec_other23456789abcdefghijklmnopqrstuvwxyzABC';
const now = () => Math.floor(Date.now() / 1000);
const rawBody = JSON.stringify({
  id: 'evt_T3stQm8WvXb2NcLs5KdRy9Ha',
  object: 'event',
  type: 'webhook.test',
  created_at: '2025-11-21T14:10:02.118Z',
  data: { object: 'webhook_test', endpoint_id: 'whe_PoHp8hvqwi1S6gDBwUMerRO8' },
});

function verificationError(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  return undefined;
}

describe('SDK verifyWebhook during a secret rotation', () => {
  it('signs with every secret given, the current one first, after one timestamp', () => {
    const t = now();
    const header = signPayload(rawBody, [NEW, OLD], t);
    const [stamp, first, second, ...rest] = header.split(',');
    expect([stamp, rest]).to.deep.equal([`t=${t}`, []]);
    expect(`t=${t},${first}`).to.equal(signPayload(rawBody, NEW, t));
    expect(`t=${t},${second}`).to.equal(signPayload(rawBody, OLD, t));
  });

  it('accepts a header with two v1 signatures with either secret, and with neither refuses it', () => {
    const header = signPayload(rawBody, [NEW, OLD], now());
    expect(verifyWebhook(rawBody, header, NEW).type).to.equal('webhook.test');
    expect(verifyWebhook(rawBody, header, OLD).type).to.equal('webhook.test');
    expect(verificationError(() => verifyWebhook(rawBody, header, OTHER))).to.equal('signature_mismatch');
  });

  it("accepts the old secret's signature in either position, and still checks the timestamp", () => {
    const t = now();
    const reversed = signPayload(rawBody, [OLD, NEW], t);
    expect(verifyWebhook(rawBody, reversed, NEW).type).to.equal('webhook.test');
    const stale = signPayload(rawBody, [NEW, OLD], t - 3600);
    expect(verificationError(() => verifyWebhook(rawBody, stale, OLD))).to.equal('timestamp_out_of_tolerance');
  });

  it('once the grace period is over, a header with the new signature only is refused with the old secret', () => {
    const header = signPayload(rawBody, [NEW], now());
    expect(verifyWebhook(rawBody, header, NEW).type).to.equal('webhook.test');
    expect(verificationError(() => verifyWebhook(rawBody, header, OLD))).to.equal('signature_mismatch');
  });
});
