import { expect } from 'chai';
import { DEFAULT_TOLERANCE_SECONDS, SIGNATURE_HEADER, WebhookVerificationError, signPayload, verifySignature } from '../../sdk/webhook-signature.ts';

const SECRET = 'whsec_test';
const T = 1_700_000_000;

function codeOf(fn: () => void): string {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).code;
  }
  throw new Error('expected verifySignature to throw');
}

describe('Webhook signatures', () => {
  describe('fixed vectors (computed outside Node, so a drift in the algorithm fails here)', () => {
    it('signs a small JSON body', () => {
      // printf '1700000000.{"id":"evt_1"}' | openssl dgst -sha256 -hmac 'whsec_test'
      expect(signPayload('{"id":"evt_1"}', 'whsec_test', 1700000000)).to.equal(
        't=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925',
      );
    });

    it('keys the HMAC with the whole secret string, whsec_ prefix included', () => {
      // printf '1700000000.{"id":"evt_2","type":"message.delivered"}' \
      //   | openssl dgst -sha256 -hmac 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
      expect(signPayload('{"id":"evt_2","type":"message.delivered"}', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 1700000000)).to.equal(
        't=1700000000,v1=46f071c03387ac093402159ccfce01f79ee886826eda8a9a287c8138d2d2204b',
      );
    });

    it('signs the UTF-8 bytes of a unicode body', () => {
      // printf '1700000300.{"body":"Grüße ✓ 你好 🚀"}' | openssl dgst -sha256 -hmac 'whsec_test'
      // (run in a UTF-8 shell: the bytes are 47 72 c3 bc c3 9f 65 ... f0 9f 9a 80)
      expect(signPayload('{"body":"Grüße ✓ 你好 🚀"}', 'whsec_test', 1700000300)).to.equal(
        't=1700000300,v1=76edbf7e0a4e029f356abcbab9c07fbfa3f1de8526f711b8fbce92e7a52a6c10',
      );
    });

    it('signs an empty body as "<t>."', () => {
      // printf '1700000000.' | openssl dgst -sha256 -hmac 'whsec_test'
      expect(signPayload('', 'whsec_test', 1700000000)).to.equal('t=1700000000,v1=5967f3c560522fa40cf2876ebc3c3a08551dd6959aaade3b413460591895bdcc');
    });

    it('verifies a fixed vector', () => {
      expect(() =>
        verifySignature('{"id":"evt_1"}', 't=1700000000,v1=c89214b5b5da833daed6f0b8c5bb6bd58cea9022bd80ccc78230f3942d632925', 'whsec_test', {
          nowSeconds: 1700000000,
        }),
      ).not.to.throw();
    });
  });

  it('names the header Dispatch-Signature and tolerates 5 minutes by default', () => {
    expect(SIGNATURE_HEADER).to.equal('Dispatch-Signature');
    expect(DEFAULT_TOLERANCE_SECONDS).to.equal(300);
  });

  it('verifies what it signed', () => {
    const body = JSON.stringify({ id: 'evt_round', type: 'message.sent', data: { n: 1 } });
    const header = signPayload(body, SECRET, T);
    expect(() => verifySignature(body, header, SECRET, { nowSeconds: T })).not.to.throw();
  });

  it('uses the real clock when no time is given', () => {
    const now = Math.floor(Date.now() / 1000);
    const header = signPayload('{}', SECRET, now);
    expect(() => verifySignature('{}', header, SECRET)).not.to.throw();
    expect(codeOf(() => verifySignature('{}', signPayload('{}', SECRET, now - 3600), SECRET))).to.equal('timestamp_out_of_tolerance');
  });

  it('refuses a tampered body, even one that parses to the same JSON', () => {
    const header = signPayload('{"id":"evt_1","amount":1}', SECRET, T);
    expect(codeOf(() => verifySignature('{"id":"evt_1","amount":2}', header, SECRET, { nowSeconds: T }))).to.equal('signature_mismatch');
    expect(codeOf(() => verifySignature('{"id": "evt_1","amount":1}', header, SECRET, { nowSeconds: T }))).to.equal('signature_mismatch');
  });

  it('refuses a signature made with another secret', () => {
    const header = signPayload('{"id":"evt_1"}', 'whsec_other', T);
    expect(codeOf(() => verifySignature('{"id":"evt_1"}', header, SECRET, { nowSeconds: T }))).to.equal('signature_mismatch');
  });

  it('refuses a signature whose timestamp was changed', () => {
    const header = signPayload('{"id":"evt_1"}', SECRET, T).replace(`t=${T}`, `t=${T + 1}`);
    expect(codeOf(() => verifySignature('{"id":"evt_1"}', header, SECRET, { nowSeconds: T }))).to.equal('signature_mismatch');
  });

  it('accepts a timestamp exactly 300 seconds old or ahead, and refuses 301', () => {
    const body = '{"id":"evt_edge"}';
    const header = signPayload(body, SECRET, T);
    expect(() => verifySignature(body, header, SECRET, { nowSeconds: T + 300 })).not.to.throw();
    expect(() => verifySignature(body, header, SECRET, { nowSeconds: T - 300 })).not.to.throw();
    expect(codeOf(() => verifySignature(body, header, SECRET, { nowSeconds: T + 301 }))).to.equal('timestamp_out_of_tolerance');
    expect(codeOf(() => verifySignature(body, header, SECRET, { nowSeconds: T - 301 }))).to.equal('timestamp_out_of_tolerance');
  });

  it('honours a custom tolerance', () => {
    const header = signPayload('{}', SECRET, T);
    expect(() => verifySignature('{}', header, SECRET, { nowSeconds: T + 600, toleranceSeconds: 600 })).not.to.throw();
    expect(codeOf(() => verifySignature('{}', header, SECRET, { nowSeconds: T + 11, toleranceSeconds: 10 }))).to.equal('timestamp_out_of_tolerance');
  });

  it('reports a stale but authentic delivery as out of tolerance, and a stale forgery as a mismatch', () => {
    const header = signPayload('{}', SECRET, T);
    expect(codeOf(() => verifySignature('{}', header, SECRET, { nowSeconds: T + 10_000 }))).to.equal('timestamp_out_of_tolerance');
    expect(codeOf(() => verifySignature('{"x":1}', header, SECRET, { nowSeconds: T + 10_000 }))).to.equal('signature_mismatch');
  });

  it('refuses a missing or empty header', () => {
    expect(codeOf(() => verifySignature('{}', undefined, SECRET))).to.equal('missing_header');
    expect(codeOf(() => verifySignature('{}', null, SECRET))).to.equal('missing_header');
    expect(codeOf(() => verifySignature('{}', '', SECRET))).to.equal('missing_header');
    expect(codeOf(() => verifySignature('{}', '   ', SECRET))).to.equal('missing_header');
  });

  it('refuses a malformed header', () => {
    const v1 = signPayload('{}', SECRET, T).split(',')[1];
    for (const header of [
      'garbage',
      v1, // no timestamp
      `t=${T}`, // no signature
      `t=abc,${v1}`,
      `t=-5,${v1}`,
      `t=1.5,${v1}`,
      `t=${T},t=${T},${v1}`,
      `t=${T},v0=${'a'.repeat(64)}`, // only an unknown scheme
    ]) {
      expect(
        codeOf(() => verifySignature('{}', header, SECRET, { nowSeconds: T })),
        header,
      ).to.equal('malformed_header');
    }
  });

  it('treats a v1 value that is not 64 hex digits as a mismatch, not a crash', () => {
    const expected = signPayload('{}', SECRET, T).split('v1=')[1];
    for (const v1 of ['', 'zz', expected.slice(0, 63), `${expected}00`, `${expected.slice(0, 62)}zz`]) {
      expect(
        codeOf(() => verifySignature('{}', `t=${T},v1=${v1}`, SECRET, { nowSeconds: T })),
        v1,
      ).to.equal('signature_mismatch');
    }
  });

  it('accepts any one of several v1 values, as during a secret rotation, and ignores other schemes', () => {
    const body = '{"id":"evt_rotate"}';
    const oldSig = signPayload(body, 'whsec_old', T).split('v1=')[1];
    const newSig = signPayload(body, 'whsec_new', T).split('v1=')[1];
    const header = `t=${T},v0=deadbeef,v1=${oldSig},v1=${newSig}`;
    expect(() => verifySignature(body, header, 'whsec_old', { nowSeconds: T })).not.to.throw();
    expect(() => verifySignature(body, header, 'whsec_new', { nowSeconds: T })).not.to.throw();
    expect(codeOf(() => verifySignature(body, header, 'whsec_third', { nowSeconds: T }))).to.equal('signature_mismatch');
  });

  it('tolerates spaces around the parts and the order t= comes in', () => {
    const body = '{}';
    const sig = signPayload(body, SECRET, T).split('v1=')[1];
    expect(() => verifySignature(body, ` v1=${sig} , t=${T} `, SECRET, { nowSeconds: T })).not.to.throw();
  });

  it('verifies a Buffer body byte for byte', () => {
    const body = '{"body":"Grüße ✓ 你好 🚀"}';
    const header = signPayload(body, SECRET, T);
    expect(() => verifySignature(Buffer.from(body, 'utf8'), header, SECRET, { nowSeconds: T })).not.to.throw();
    const latin1 = Buffer.from(body, 'latin1'); // the same text, other bytes
    expect(codeOf(() => verifySignature(latin1, header, SECRET, { nowSeconds: T }))).to.equal('signature_mismatch');
  });

  it('verifies a unicode body given as a string', () => {
    // The fixed vector above, verified.
    expect(() =>
      verifySignature('{"body":"Grüße ✓ 你好 🚀"}', 't=1700000300,v1=76edbf7e0a4e029f356abcbab9c07fbfa3f1de8526f711b8fbce92e7a52a6c10', 'whsec_test', {
        nowSeconds: 1700000300,
      }),
    ).not.to.throw();
  });

  it('refuses to sign with a timestamp that is not whole seconds', () => {
    expect(() => signPayload('{}', SECRET, 1.5)).to.throw(TypeError);
    expect(() => signPayload('{}', SECRET, Date.now() / 1000)).to.throw(TypeError);
  });
});
