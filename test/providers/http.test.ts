import { expect } from 'chai';
import { checkHttpConfig, createHttpProvider, parseHttpDeliveryReport } from '../../providers/http.ts';
import type { HttpConfig } from '../../providers/http.ts';
import type { DeliveryReport, OutboundMessage, Provider, ProviderContext } from '../../providers/types.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { freePort } from '../../app/free-port.ts';

const DLR_URL = 'http://dispatch.test/v1/dlr/http/route-secret-token';

const context: ProviderContext = {
  routeId: 7,
  dlrUrl: DLR_URL,
  onReport: async () => {},
  onInbound: async () => {},
};

let sequence = 0;
function message(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  sequence += 1;
  return {
    messageId: `msg_${String(sequence).padStart(6, '0')}`,
    to: '+14155550123',
    from: 'Dispatch',
    body: 'Your code is 123456',
    encoding: 'GSM-7',
    segments: 1,
    parts: ['Your code is 123456'],
    ...overrides,
  };
}

describe('HTTP provider', () => {
  let fake: FakeHttpProvider;
  const providers: Provider[] = [];

  function provider(config: Partial<HttpConfig> = {}): Provider {
    const created = createHttpProvider({ url: fake.url, ...config }, context);
    providers.push(created);
    return created;
  }

  before(async () => {
    fake = await FakeHttpProvider.start();
  });

  beforeEach(() => fake.reset());

  after(async () => {
    for (const created of providers) await created.close();
    await fake.stop();
  });

  describe('submit', () => {
    it('is accepted with the id the provider gives', async () => {
      fake.behave({ accept: true, id: 'prov-42' });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'accepted', providerMessageId: 'prov-42' });
    });

    it('POSTs exactly the documented JSON, with dlr_url from the context', async () => {
      const sent = message({ body: 'Grüße 😀', encoding: 'UCS-2', segments: 2, parts: ['Grüße', ' 😀'] });
      await provider().submit(sent);
      expect(fake.requests).to.have.length(1);
      const [request] = fake.requests;
      expect(request.method).to.equal('POST');
      expect(request.path).to.equal('/sms');
      expect(request.body).to.deep.equal({
        message_id: sent.messageId,
        to: '+14155550123',
        from: 'Dispatch',
        body: 'Grüße 😀',
        encoding: 'UCS-2',
        segments: 2,
        dlr_url: DLR_URL,
      });
    });

    it('sends JSON content type, a Dispatch user agent and the message id as Idempotency-Key', async () => {
      const sent = message();
      await provider().submit(sent);
      const { headers } = fake.requests[0];
      expect(headers['content-type']).to.equal('application/json');
      expect(headers['user-agent']).to.equal('Dispatch');
      expect(headers['idempotency-key']).to.equal(sent.messageId);
    });

    it('sends a bearer token only when one is configured', async () => {
      await provider({ token: 's3cr3t-token' }).submit(message());
      await provider().submit(message());
      expect(fake.requests[0].headers.authorization).to.equal('Bearer s3cr3t-token');
      expect(fake.requests[1].headers).not.to.have.property('authorization');
    });

    it('is rejected with the provider’s code and message when a 400 carries an error body', async () => {
      fake.behave({ status: 400, body: { error: { code: 'invalid_number', message: 'The destination is not a mobile number.' } } });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'rejected', code: 'invalid_number', message: 'The destination is not a mobile number.' });
    });

    it('is rejected as provider_rejected with the HTTP status when a 4xx has no body', async () => {
      fake.behave({ status: 400 });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: 'HTTP 400 from provider' });
    });

    it('falls back to provider_rejected and the status when the error body is not JSON or lacks the fields', async () => {
      fake.behave((_body, index) =>
        index === 0 ? { status: 400, body: '<html>Bad Request</html>' } : { status: 422, body: { error: { message: 'Sender not allowed.' } } },
      );
      expect(await provider().submit(message())).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: 'HTTP 400 from provider' });
      expect(await provider().submit(message())).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: 'Sender not allowed.' });
    });

    for (const status of [401, 403, 404, 422]) {
      it(`is rejected, a hard error, on HTTP ${status}`, async () => {
        fake.behave({ status });
        const outcome = await provider().submit(message());
        expect(outcome).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: `HTTP ${status} from provider` });
      });
    }

    it('is retryable on HTTP 429', async () => {
      fake.behave({ status: 429, body: { error: { code: 'throttled', message: 'Slow down.' } } });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'retryable', code: 'provider_unavailable', message: 'HTTP 429 from provider' });
    });

    for (const status of [500, 502, 503]) {
      it(`is retryable on HTTP ${status}`, async () => {
        fake.behave({ status, body: { error: { code: 'down', message: 'Maintenance.' } } });
        const outcome = await provider().submit(message());
        expect(outcome).to.deep.equal({ status: 'retryable', code: 'provider_unavailable', message: `HTTP ${status} from provider` });
      });
    }

    describe('when nothing reached the provider', () => {
      it('is retryable with “connection refused” when nothing listens on the port', async () => {
        const port = await freePort();
        const outcome = await provider({ url: `http://127.0.0.1:${port}/sms` }).submit(message());
        expect(outcome).to.deep.equal({ status: 'retryable', code: 'provider_unavailable', message: 'connection refused' });
      });

      it('is retryable when the host name does not resolve', async () => {
        const outcome = await provider({ url: 'http://no-such-host.invalid/sms', timeout_ms: 3000 }).submit(message());
        expect(outcome).to.include({ status: 'retryable', code: 'provider_unavailable' });
        expect((outcome as { message: string }).message).to.match(/no-such-host\.invalid|no connection within/);
      });

      it('is retryable when the TLS handshake fails, and the server saw no request', async () => {
        // The fake speaks plain HTTP, so the handshake gets an answer that is not TLS.
        const outcome = await provider({ url: fake.url.replace('http:', 'https:') }).submit(message());
        expect(outcome).to.include({ status: 'retryable', code: 'provider_unavailable' });
        expect((outcome as { message: string }).message).to.match(/^TLS /);
        expect(fake.requests).to.have.length(0);
      });
    });

    describe('when the request was written but no complete answer came', () => {
      it('is unknown when the provider does not answer within timeout_ms', async () => {
        fake.behave({ hang: true });
        const outcome = await provider({ timeout_ms: 200 }).submit(message());
        expect(outcome).to.deep.equal({ status: 'unknown', code: 'provider_timeout', message: 'no answer within 200 ms; the provider may have sent it' });
        expect(fake.requests).to.have.length(1);
      });

      it('is unknown when the provider reads the request and resets the connection', async () => {
        fake.behave({ reset: true });
        const outcome = await provider().submit(message());
        expect(outcome).to.include({ status: 'unknown', code: 'provider_timeout' });
        expect((outcome as { message: string }).message).to.match(/^the connection (was reset|closed) before it answered; the provider may have sent it$/);
        expect(fake.requests).to.have.length(1);
      });

      it('is unknown when a 200 comes only after timeout_ms', async () => {
        fake.behave({ accept: true, id: 'prov-late', delayMs: 600 });
        const outcome = await provider({ timeout_ms: 200 }).submit(message());
        expect(outcome).to.deep.equal({ status: 'unknown', code: 'provider_timeout', message: 'no answer within 200 ms; the provider may have sent it' });
      });

      it('is unknown when a 2xx arrives but its body stalls past timeout_ms', async () => {
        fake.behave({ hang: true, afterHeaders: true });
        const outcome = await provider({ timeout_ms: 200 }).submit(message());
        expect(outcome).to.deep.equal({
          status: 'unknown',
          code: 'provider_timeout',
          message: 'HTTP 200 from provider, but its body did not arrive within 200 ms; the provider may have sent it',
        });
      });

      it('is unknown when the connection closes in the middle of a 2xx body', async () => {
        fake.behave({ closeMidBody: true });
        const outcome = await provider().submit(message());
        expect(outcome).to.deep.equal({
          status: 'unknown',
          code: 'provider_timeout',
          message: 'HTTP 200 from provider, but the connection closed before its body ended; the provider may have sent it',
        });
      });

      it('is unknown when a reused keep-alive connection is reset under the next request', async () => {
        const http = provider();
        expect((await http.submit(message())).status).to.equal('accepted');
        fake.behave({ reset: true });
        const outcome = await http.submit(message());
        expect(outcome).to.include({ status: 'unknown', code: 'provider_timeout' });
        expect(fake.connections).to.equal(1);
      });
    });

    it('keeps the connection alive between submits', async () => {
      const http = provider();
      for (let i = 0; i < 3; i++) expect((await http.submit(message())).status).to.equal('accepted');
      expect(fake.requests).to.have.length(3);
      expect(fake.connections).to.equal(1);
    });

    it('reuses the connection after a 503 and a 400 too', async () => {
      const http = provider();
      fake.behave((_body, index) => (index === 0 ? { status: 503, body: { error: { code: 'down' } } } : index === 1 ? { status: 400 } : { accept: true }));
      expect((await http.submit(message())).status).to.equal('retryable');
      expect((await http.submit(message())).status).to.equal('rejected');
      expect((await http.submit(message())).status).to.equal('accepted');
      expect(fake.connections).to.equal(1);
    });

    it('is rejected as provider_invalid_response when a 2xx body is not JSON, since the provider may have taken it', async () => {
      fake.behave({ status: 200, body: '<html>OK</html>' });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({
        status: 'rejected',
        code: 'provider_invalid_response',
        message: 'HTTP 200 from provider without a message id in its body',
      });
    });

    it('does not follow a 302 redirect, and rejects it', async () => {
      fake.behave((_body, index) => (index === 0 ? { status: 302, headers: { Location: `${fake.origin}/elsewhere` } } : { accept: true }));
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'rejected', code: 'provider_rejected', message: 'HTTP 302 from provider' });
      expect(fake.requests).to.have.length(1);
    });

    it('is rejected as provider_invalid_response when a 2xx carries no usable id', async () => {
      const bodies: unknown[] = [{}, { id: '' }, { id: 42 }, 'accepted', undefined, [{ id: 'x' }]];
      fake.behave((_body, index) => ({ status: index === 4 ? 204 : 200, body: bodies[index] }));
      for (let index = 0; index < bodies.length; index++) {
        const outcome = await provider().submit(message());
        expect(outcome).to.include({ status: 'rejected', code: 'provider_invalid_response' });
        expect((outcome as { message: string }).message)
          .to.be.a('string')
          .and.have.length.above(0);
      }
    });

    it('is accepted on any 2xx status with an id, such as 201 and 202', async () => {
      fake.behave((_body, index) => ({ status: index === 0 ? 201 : 202, body: { id: `prov-${index}` } }));
      expect(await provider().submit(message())).to.deep.equal({ status: 'accepted', providerMessageId: 'prov-0' });
      expect(await provider().submit(message())).to.deep.equal({ status: 'accepted', providerMessageId: 'prov-1' });
    });

    it('uses a 5000 ms timeout when none is configured', async () => {
      fake.behave({ hang: true });
      const outcome = await provider().submit(message());
      expect(outcome).to.deep.equal({ status: 'unknown', code: 'provider_timeout', message: 'no answer within 5000 ms; the provider may have sent it' });
    });

    it('gives up a submit in flight as unknown when closed', async () => {
      fake.behave({ hang: true });
      const http = provider();
      const pending = http.submit(message());
      await fake.waitForRequests(1);
      await http.close();
      expect(await pending).to.include({ status: 'unknown', code: 'provider_timeout' });
    });

    it('closes without error', async () => {
      await provider().close();
    });
  });

  describe('the fake provider', () => {
    it('gives a repeated Idempotency-Key the same id, as a deduping provider would', async () => {
      const sent = message();
      const first = await provider().submit(sent);
      const second = await provider().submit(sent);
      expect(first.status).to.equal('accepted');
      expect(second).to.deep.equal(first);
    });

    it('holds an answer until released, so a delivery report can overtake it', async () => {
      const held = fake.holdNextAnswer();
      const pending = provider().submit(message());
      await held.received;
      let settled = false;
      void pending.then(() => (settled = true));
      // A later submit is answered in full while the held one is not: an order, not a wait.
      expect((await provider().submit(message())).status).to.equal('accepted');
      expect(settled).to.equal(false);
      held.release();
      expect((await pending).status).to.equal('accepted');
    });

    it('posts delivery reports to a dlr_url', async () => {
      const receiver = await FakeHttpProvider.start();
      try {
        const response = await fake.postReport(receiver.url, { id: 'prov-1', status: 'delivered' });
        expect(response.status).to.equal(200);
        await receiver.waitForRequests(1);
        expect(receiver.requests[0].body).to.deep.equal({ id: 'prov-1', status: 'delivered' });
      } finally {
        await receiver.stop();
      }
    });
  });
});

describe('parseHttpDeliveryReport', () => {
  it('reads a delivered report', () => {
    expect(parseHttpDeliveryReport({ id: 'prov-1', status: 'delivered' })).to.deep.equal({ providerMessageId: 'prov-1', status: 'delivered' });
  });

  it('reads an undelivered report and keeps its error code and message', () => {
    const report = parseHttpDeliveryReport({ id: 'prov-2', status: 'undelivered', error_code: 'EXPIRED', error_message: 'Handset unreachable for 48 h.' });
    expect(report).to.deep.equal({ providerMessageId: 'prov-2', status: 'undelivered', errorCode: 'EXPIRED', errorMessage: 'Handset unreachable for 48 h.' });
    expect(parseHttpDeliveryReport({ id: 'prov-3', status: 'expired' })).to.deep.equal({ providerMessageId: 'prov-3', status: 'undelivered', expired: true });
  });

  it('maps failed to undelivered, since the message had already been accepted', () => {
    const report = parseHttpDeliveryReport({ id: 'prov-3', status: 'failed', error_message: 'Carrier rejected.' });
    expect(report).to.deep.equal({ providerMessageId: 'prov-3', status: 'undelivered', errorMessage: 'Carrier rejected.' });
  });

  it('keeps a numeric error code as a string', () => {
    expect(parseHttpDeliveryReport({ id: 'prov-4', status: 'undelivered', error_code: 34 })?.errorCode).to.equal('34');
  });

  it('takes the time from an ISO date-time timestamp', () => {
    const report = parseHttpDeliveryReport({ id: 'prov-5', status: 'delivered', timestamp: '2025-03-01T12:34:56.789+02:00' });
    expect(report?.at?.toISOString()).to.equal('2025-03-01T10:34:56.789Z');
  });

  it('takes the time from a unix seconds timestamp', () => {
    const report = parseHttpDeliveryReport({ id: 'prov-6', status: 'delivered', timestamp: 1_740_832_496 });
    expect(report?.at?.toISOString()).to.equal('2025-03-01T12:34:56.000Z');
  });

  it('leaves out the time when the timestamp is not a valid date-time, and keeps the status', () => {
    for (const timestamp of ['yesterday', '2025-02-30T10:00:00Z', '2025-03-01T10:00:00', -5, 1_740_832_496_000, true, null]) {
      const report = parseHttpDeliveryReport({ id: 'prov-7', status: 'delivered', timestamp });
      expect(report, String(timestamp)).to.deep.equal({ providerMessageId: 'prov-7', status: 'delivered' } satisfies DeliveryReport);
    }
  });

  it('refuses a report without an id, or with an empty or non-string one', () => {
    expect(parseHttpDeliveryReport({ status: 'delivered' })).to.equal(null);
    expect(parseHttpDeliveryReport({ id: '', status: 'delivered' })).to.equal(null);
    expect(parseHttpDeliveryReport({ id: 12, status: 'delivered' })).to.equal(null);
  });

  it('refuses a report with a missing or unknown status', () => {
    expect(parseHttpDeliveryReport({ id: 'prov-8' })).to.equal(null);
    expect(parseHttpDeliveryReport({ id: 'prov-8', status: 'sent' })).to.equal(null);
    expect(parseHttpDeliveryReport({ id: 'prov-8', status: 'DELIVERED' })).to.equal(null);
    expect(parseHttpDeliveryReport({ id: 'prov-8', status: 'toString' })).to.equal(null);
  });

  it('refuses a body that is not an object', () => {
    for (const body of [null, undefined, 'delivered', 42, [{ id: 'prov-9', status: 'delivered' }]]) {
      expect(parseHttpDeliveryReport(body)).to.equal(null);
    }
  });
});

describe('checkHttpConfig', () => {
  it('accepts a URL alone, and with a token and a timeout', () => {
    expect(checkHttpConfig({ url: 'https://sms.example.com/v1/messages' })).to.equal(null);
    expect(checkHttpConfig({ url: 'http://127.0.0.1:8080/sms', token: 'abc.DEF-123_~+/=', timeout_ms: 100 })).to.equal(null);
    expect(checkHttpConfig({ url: 'https://sms.example.com', timeout_ms: 60_000 })).to.equal(null);
  });

  it('accepts idempotent and failover_on_timeout as booleans', () => {
    expect(checkHttpConfig({ url: 'https://sms.example.com', idempotent: true, failover_on_timeout: false })).to.equal(null);
  });

  it('refuses a config that is not an object', () => {
    expect(checkHttpConfig(null)?.param).to.equal('config');
    expect(checkHttpConfig('https://sms.example.com')?.param).to.equal('config');
  });

  const problems: Array<[string, unknown, string]> = [
    ['a missing url', {}, 'config.url'],
    ['a url that is not a string', { url: 42 }, 'config.url'],
    ['a relative url', { url: '/sms' }, 'config.url'],
    ['an ftp url', { url: 'ftp://sms.example.com/in' }, 'config.url'],
    ['a url with a password in it', { url: 'https://user:pass@sms.example.com/' }, 'config.url'],
    ['a timeout_ms of 0', { url: 'https://sms.example.com', timeout_ms: 0 }, 'config.timeout_ms'],
    ['a timeout_ms above 60000', { url: 'https://sms.example.com', timeout_ms: 60_001 }, 'config.timeout_ms'],
    ['a timeout_ms that is not an integer', { url: 'https://sms.example.com', timeout_ms: 1500.5 }, 'config.timeout_ms'],
    ['a timeout_ms given as a string', { url: 'https://sms.example.com', timeout_ms: '5000' }, 'config.timeout_ms'],
    ['a token that is not a string', { url: 'https://sms.example.com', token: 12345 }, 'config.token'],
    ['an empty token', { url: 'https://sms.example.com', token: '' }, 'config.token'],
    ['a token with a line break', { url: 'https://sms.example.com', token: 'abc\r\nX-Evil: 1' }, 'config.token'],
    ['an unknown field', { url: 'https://sms.example.com', method: 'PUT' }, 'config.method'],
    ['an idempotent that is not a boolean', { url: 'https://sms.example.com', idempotent: 'yes' }, 'config.idempotent'],
    ['a failover_on_timeout that is not a boolean', { url: 'https://sms.example.com', failover_on_timeout: 1 }, 'config.failover_on_timeout'],
  ];
  for (const [what, config, param] of problems) {
    it(`names ${param} for ${what}`, () => {
      const problem = checkHttpConfig(config);
      expect(problem?.param).to.equal(param);
      expect(problem?.message).to.be.a('string').and.include(param);
    });
  }
});
