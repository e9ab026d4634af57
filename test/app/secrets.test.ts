import { Writable } from 'node:stream';
import { expect } from 'chai';
import { redactPath } from '../../app/log-redaction.ts';
import { createLogger } from '../../app/logger.ts';
import type { Dispatch } from '../../app/server.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { call, loadContract, type Answer, type RequestOptions } from '../support/client.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { FakeSmsc } from '../support/fake-smsc.ts';
import { ADMIN_TOKEN, startInstance } from '../support/harness.ts';
import { startPrivateCluster, type PrivateCluster } from '../support/private-postgres.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

/** A frame of a JavaScript stack trace, as Node prints it. */
const STACK_FRAME = /(^|\\n|\n)\s+at \S/;

/**
 * A realistic run against a Dispatch of its own (its own cluster, so that every job and every
 * callback is handled, and logged, by the instance under watch): keys made by the operator and by
 * a key, a signed webhook endpoint, an HTTP route with a bearer token and its delivery-report URL,
 * an SMPP route with a password, single and bulk sends with their delivery reports, and refusals.
 */
describe('secrets after a realistic run', function () {
  this.timeout(120_000);
  const lines: string[] = [];
  const answers: string[] = [];
  const secrets: Record<string, string> = { 'the admin token': ADMIN_TOKEN };
  let cluster: PrivateCluster;
  let databaseUrl: string;
  let dispatch: Dispatch;
  let provider: FakeHttpProvider;
  let smsc: FakeSmsc;
  let receiver: WebhookReceiver;
  let plainKeys: string[];

  /** Every call of the run goes through the contract-checking client; its answer is kept for the stack-trace check. */
  async function api<M extends string, P extends string>(method: M, path: P, options: RequestOptions = {}): Promise<Answer<M, P>> {
    const response = await call(method, path, { baseUrl: dispatch.baseUrl, ...options });
    answers.push(JSON.stringify(response.body));
    return response;
  }

  async function raw(url: string, init: RequestInit): Promise<Response> {
    const response = await fetch(url, init);
    answers.push(await response.clone().text());
    return response;
  }

  async function waitFor(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  before(async () => {
    // Compiled before the first call: a connection left idle past the server's keep-alive
    // timeout while it compiles is reset under the client's next request.
    await loadContract();
    cluster = await startPrivateCluster();
    databaseUrl = await cluster.createDatabase(`dispatch_secrets_${randomBase62(8).toLowerCase()}`);
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    dispatch = await startInstance(databaseUrl, {}, createLogger('debug', stream));
    provider = await FakeHttpProvider.start();
    secrets['the SMPP password'] = randomBase62(16);
    smsc = await FakeSmsc.start({ password: secrets['the SMPP password'] });
    receiver = await WebhookReceiver.start();

    const account = (await api('POST', '/admin/accounts', { auth: 'admin', body: { email: 'secrets@example.com', name: 'Secrets', balance: 10 } })).body.data;
    const main = (await api('POST', `/admin/accounts/${account.id}/api-keys`, { auth: 'admin', body: { name: 'Main' } })).body.data.plain_key;
    const minted = (await api('POST', '/api-keys/create', { auth: main, body: { name: 'Sending', permissions: ['sms:send', 'sms:bulk', 'sms:read'] } })).body
      .data;
    const revoked = (await api('POST', '/api-keys/create', { auth: main, body: { name: 'Revoked', permissions: ['sms:read'] } })).body.data;
    await api('DELETE', `/api-keys/${revoked.id}`, { auth: main });
    await api('GET', '/messages', { auth: revoked.plain_key });
    plainKeys = [main, minted.plain_key, revoked.plain_key];
    const sending = minted.plain_key;

    secrets['the signing secret'] = (await api('POST', '/webhooks/create', { auth: main, body: { url: receiver.url } })).body.data.signing_secret;
    const sender = (await api('POST', '/senders/create', { auth: main, body: { sender_id: 'Dispatch' } })).body.data;
    await api('POST', `/admin/senders/${sender.id}/approve`, { auth: 'admin' });

    secrets['the HTTP route token'] = randomBase62(24);
    const routes = [
      { provider: 'http', config: { url: provider.url, token: secrets['the HTTP route token'] }, prefixes: ['+1'] },
      {
        provider: 'smpp',
        config: { host: '127.0.0.1', port: smsc.port, system_id: FakeSmsc.SYSTEM_ID, password: secrets['the SMPP password'] },
        prefixes: ['+44'],
      },
    ];
    for (const [priority, route] of routes.entries()) {
      const created = (await api('POST', '/admin/routes', { auth: 'admin', body: { name: `${route.provider}-route`, price_per_segment: 0.01, ...route } })).body
        .data;
      await api('PUT', `/admin/accounts/${account.id}/routes/${created.id}`, { auth: 'admin', body: { priority } });
    }

    provider.behave((body) => ({ accept: true, id: `prov-${body.message_id}` }));
    const single = (await api('POST', '/messages/send', { auth: sending, body: { to: '+14155550123', from: 'Dispatch', body: 'Your code is 1234' } })).body
      .data;
    const bulk = (
      await api('POST', '/messages/bulk', { auth: sending, body: { recipients: ['+12127001234', '+12127005678'], from: 'Dispatch', body: 'Sale today' } })
    ).body.data;
    const viaSmpp = (await api('POST', '/messages/send', { auth: sending, body: { to: '+447911123456', from: 'Dispatch', body: 'Hello' } })).body.data;
    const messageIds = [single.id, ...bulk.messages.map((message: { id: string }) => message.id), viaSmpp.id];

    await waitFor('three HTTP submits', () => provider.requests.length >= 3);
    const dlrUrl = provider.requests[0].body.dlr_url;
    secrets['the delivery-report token'] = dlrUrl.split('/').at(-1) as string;
    for (const request of provider.requests) {
      await raw(dlrUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: `prov-${request.body.message_id}`, status: 'delivered' }),
      });
    }
    await waitFor('the SMPP submit', () => smsc.submits.some((submit) => submit.messageId !== ''));
    await smsc.sendReceipt(smsc.submits[0].messageId, 'DELIVRD');
    await waitFor('every message delivered', async () => {
      const states = await Promise.all(messageIds.map(async (id) => (await api('GET', `/messages/${id}`, { auth: sending })).body.data.status));
      return states.every((status) => status === 'delivered');
    });
    await waitFor('every message.delivered webhook', () => receiver.eventsOfType('message.delivered').length >= messageIds.length);

    // Refusals and hostile input: their answers must be as clean as the successes.
    await raw(dlrUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"id": ' });
    await raw(dlrUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'x', status: 'exploded' }) });
    await raw(`${dlrUrl}x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await raw(`${dispatch.baseUrl}/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sending}`, 'content-type': 'application/json' },
      body: '{"to": "+1',
    });
    await raw(`${dispatch.baseUrl}/messages/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sending}`, 'content-type': 'text/plain' },
      body: 'hello',
    });
    await api('POST', '/messages/send', { auth: sending, body: { to: '12345', from: 'Dispatch', body: 'x'.repeat(2000) } });
    await api('GET', '/admin/routes', { auth: main });
    await api('GET', '/account', { headers: { authorization: `Basic ${Buffer.from(`user:${main}`).toString('base64')}` } });
    await dispatch.flushKeyUsage();
  });

  after(async () => {
    await dispatch?.stop();
    await Promise.all([provider?.stop(), smsc?.stop(), receiver?.stop()]);
    await cluster?.stop();
  });

  it('logged the run, delivery-report callbacks included, with their secret segment redacted', () => {
    const requests = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
    expect(requests.length).to.be.at.least(answers.length);
    const callbacks = requests.filter((line) => line.path.startsWith('/callbacks/'));
    expect(callbacks).to.have.length(provider.requests.length + 3);
    expect(new Set(callbacks.map((line) => line.path))).to.deep.equal(new Set(['/callbacks/dlr/[redacted]']));
  });

  it('logged no plain key, no Authorization header value and no route or signing secret', () => {
    const log = lines.join('\n');
    const forbidden = {
      ...secrets,
      'the signing secret without its prefix': secrets['the signing secret'].replace(/^whsec_/, ''),
      ...Object.fromEntries(
        plainKeys.flatMap((key, index) => [
          [`plain key ${index}`, key],
          [`plain key ${index} without its prefix`, key.slice('ds_live_'.length)],
        ]),
      ),
    };
    for (const [what, secret] of Object.entries(forbidden)) {
      expect(secret.length, what).to.be.at.least(16);
      expect(log.includes(secret), `the log holds ${what}`).to.equal(false);
    }
  });

  it('keeps no plain API key in the database: a pg_dump holds none', async () => {
    const dump = await cluster.dump(databaseUrl);
    expect(dump).to.include('COPY public.api_keys');
    for (const [index, key] of plainKeys.entries()) {
      expect(dump.includes(key.slice('ds_live_'.length)), `the dump holds plain key ${index}`).to.equal(false);
      expect(dump, 'the dump holds the key hints, so it did read the keys').to.include(`${key.slice(0, 12)}...${key.slice(-4)}`);
    }
  });

  it('answered nothing with a stack trace', () => {
    expect(answers.length).to.be.at.least(20);
    const traced = answers.filter((answer) => STACK_FRAME.test(answer));
    expect(traced, traced.join('\n')).to.deep.equal([]);
  });
});

describe('log redaction', () => {
  it('redacts the secret of a delivery-report path however it is written, and leaves other paths alone', () => {
    for (const path of [
      '/callbacks/dlr/abc123',
      '/CALLBACKS/DLR/abc123',
      '/callbacks//dlr/abc123/extra',
      '/callbacks%2Fdlr%2Fabc123',
      '//callbacks/dlr/abc123',
    ]) {
      expect(redactPath(path), path).to.not.include('abc123');
      expect(redactPath(path), path).to.match(/\[redacted\]$/);
    }
    expect(redactPath('/api/v1/messages/msg_abc123')).to.equal('/api/v1/messages/msg_abc123');
  });

  it('censors secret fields at the top of a log line and two levels down', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    logger.info(
      {
        authorization: 'Bearer top-level-value',
        req: { headers: { authorization: 'Bearer nested-value' } },
        route: { config: { token: 'route-token-value', password: 'smpp-password-value' }, dlr_token: 'dlr-token-value' },
        endpoint: { signing_secret: 'whsec_signing-value' },
        created: { plain_key: 'ds_live_plain-value' },
        submit: { dlr_url: 'http://host/callbacks/dlr/dlr-url-value' },
      },
      'everything secret',
    );
    expect(lines).to.have.length(1);
    expect(lines[0]).to.not.match(/-value/);
    expect(JSON.parse(lines[0]).route.config).to.deep.equal({ token: '[redacted]', password: '[redacted]' });
  });
});
