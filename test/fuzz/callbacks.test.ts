import { expect } from 'chai';
import fc from 'fast-check';
import { checkErrorBody } from '../support/client.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/** Text as hostile as a provider's could be: NUL, lone surrogates, controls, anything Unicode. */
const hostileText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('\u0000', '\ud800', '\udfff', 'a\u0000b', '%00', '\\u0000', ''),
);
const anyValue = fc.oneof(
  hostileText,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileText, { maxLength: 3 }),
  fc.dictionary(hostileText, hostileText, { maxKeys: 3 }),
);

/** A delivery report or an inbound message, with each field valid, hostile, of another type, or missing. */
const callbackBody = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc.oneof(
    fc.record(Object.fromEntries(Object.entries(fields).map(([name, valid]) => [name, fc.oneof(valid, hostileText, anyValue)])), { requiredKeys: [] }),
    anyValue,
  );

const REPORT = callbackBody({
  id: fc.constant('fuzz-1'),
  status: fc.constantFrom('delivered', 'undelivered', 'failed'),
  error_code: hostileText,
  timestamp: fc.date().map((date) => (Number.isNaN(date.getTime()) ? 'x' : date.toISOString())),
});
const INBOUND = callbackBody({
  id: hostileText,
  from: fc.constantFrom('+14155550123', '14155550123'),
  to: fc.constantFrom('+14155550124'),
  body: hostileText,
  timestamp: hostileText,
});

/**
 * The provider callbacks are outside openapi.yaml, so the operation fuzzer does not reach them:
 * every body, however hostile, gets an answer below 500 in the error envelope, 400 naming a field.
 */
describe('fuzzing the provider callbacks', function () {
  this.timeout(120_000);
  let origin: string;
  let token: string;

  before(async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: 'http://127.0.0.1:9/sms' } }] });
    ({ dlr_token: token } = await harness.db('routes').where({ id: tenant.routeIds[0] }).first('dlr_token'));
    origin = harness.baseUrl.replace(/\/api\/v1$/, '');
  });

  for (const [path, bodies] of [
    ['dlr', REPORT],
    ['inbound', INBOUND],
  ] as const) {
    it(`POST /callbacks/${path}/<token> answers 200 or a 4xx in the error envelope to 200 generated bodies, never a 5xx`, async () => {
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          const response = await fetch(`${origin}/callbacks/${path}/${token}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          const answer: unknown = await response.json();
          if (response.ok) return;
          // Anything refused is a client error in the error envelope of openapi.yaml, never a 5xx.
          expect(Math.floor(response.status / 100), `${response.status} to ${JSON.stringify(body)}`).to.equal(4);
          await checkErrorBody(`POST /callbacks/${path} ${JSON.stringify(body)}`, answer);
        }),
        { numRuns: 200 },
      );
    });
  }
});
