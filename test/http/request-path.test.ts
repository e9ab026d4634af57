import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../app/logger.ts';
import { call, expectError, type Schemas } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { ADMIN_TOKEN, harness, startInstance } from '../support/harness.ts';

/** A logger whose lines are kept for the test to read. */
function capturedLogger() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger('debug', stream) };
}

describe('the request path', () => {
  it('wraps a success in the envelope with a request id that is also the X-Request-Id header', async () => {
    const tenant = await createTenant();
    const response = await call('GET', '/account', { auth: tenant.key });
    expect(response.body).to.have.keys('success', 'data', 'meta');
    expect(response.body.meta).to.deep.equal({ request_id: response.headers.get('x-request-id'), api_version: 'v1' });
    expect(response.body.meta.request_id).to.match(/^req_[0-9A-Za-z]{24}$/);
  });

  it('answers an unknown path with 404 not_found in the envelope', async () => {
    const tenant = await createTenant();
    const response = await call('GET', '/nothing-here', { auth: tenant.key });
    expectError(response, 404, 'not_found');
    expect(response.body.error.type).to.equal('invalid_request_error');
  });

  it('answers a path outside the API with 404 in the envelope too', async () => {
    const response = await fetch(`${harness.baseUrl.replace('/api/v1', '')}/wp-login.php`);
    expect(response.status).to.equal(404);
    expect(((await response.json()) as Schemas['ErrorEnvelope']).error.code).to.equal('not_found');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const tenant = await createTenant();
    const response = await call('PUT', '/account', { auth: tenant.key });
    expectError(response, 405, 'method_not_allowed');
    expect(response.headers.get('allow')).to.equal('GET, HEAD, PATCH');
  });

  it('answers a wrong method on a path without parameters with 405, not as a templated path would (GET /messages/send is no message id)', async () => {
    const tenant = await createTenant();
    for (const [method, path, allow] of [
      ['GET', '/messages/send', 'POST'],
      ['DELETE', '/messages/bulk', 'POST'],
      ['GET', '/webhooks/create', 'POST'],
    ] as const) {
      const response = await call(method, path, { auth: tenant.key });
      expectError(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow'), `${method} ${path}`).to.equal(allow);
    }
  });

  it('sends a browser that opens / to the console at /console/, and tells a program where the API is', async () => {
    const root = harness.baseUrl.replace('/api/v1', '/');
    const browser = await fetch(root, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }, redirect: 'manual' });
    expect([browser.status, browser.headers.get('location')]).to.deep.equal([302, '/console/']);
    const program = await fetch(root, { headers: { accept: 'application/json' } });
    expect(program.status).to.equal(404);
    expect(((await program.json()) as Schemas['ErrorEnvelope']).error.message).to.match(/\/api\/v1.*\/docs.*\/console\//);
  });

  it('answers malformed JSON with 400 invalid_json and no stack trace', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/senders/create', { auth: tenant.key, rawBody: '{"sender_id": "Acme",' });
    expectError(response, 400, 'invalid_json');
    expect(JSON.stringify(response.body)).to.not.match(/at .*\.js|SyntaxError/);
  });

  it('answers a body that is not an object with 400', async () => {
    const tenant = await createTenant();
    expectError(await call('POST', '/senders/create', { auth: tenant.key, rawBody: '"Acme"' }), 400, 'parameter_invalid');
  });

  it('answers a missing body with 400', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/senders/create', { auth: tenant.key });
    expectError(response, 400, 'invalid_request');
    expect(response.body.error.message).to.match(/body is required/);
  });

  it('lists every validation failure in details.errors', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/api-keys/create', { auth: tenant.key, body: { rate_limit: 0, colour: 'blue' } });
    expect(response.status).to.equal(400);
    const params = response.body.error.details!.errors!.map((error) => error.param);
    expect(params).to.have.members(['name', 'rate_limit', 'colour']);
  });

  it('answers an unexpected failure with a generic 500, logged with its request id, details withheld', async () => {
    const { lines, logger } = capturedLogger();
    const instance = await startInstance(harness.database.url, {}, logger);
    const tenant = await createTenant();
    await harness.db.raw('ALTER TABLE senders RENAME TO senders_elsewhere');
    try {
      const response = await call('GET', '/senders', { auth: tenant.key, baseUrl: instance.baseUrl });
      expectError(response, 500, 'internal_error');
      expect(response.body.error.type).to.equal('api_error');
      expect(JSON.stringify(response.body)).to.not.match(/senders|relation|select/i);
      const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'unexpected error');
      expect(logged.request_id).to.equal(response.body.meta.request_id);
      expect(JSON.stringify(logged.err)).to.match(/senders/);
    } finally {
      await harness.db.raw('ALTER TABLE senders_elsewhere RENAME TO senders');
      await instance.stop();
    }
  });

  it('writes one log line per request, with its request id, and never a secret', async () => {
    const { lines, logger } = capturedLogger();
    const instance = await startInstance(harness.database.url, {}, logger);
    try {
      const tenant = await createTenant();
      const created = await call('POST', '/api-keys/create', { auth: tenant.key, baseUrl: instance.baseUrl, body: { name: 'Logged' } });
      await call('GET', '/account', { auth: created.body.data.plain_key, baseUrl: instance.baseUrl });
      await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', baseUrl: instance.baseUrl, body: { amount: 1 } });
      const text = lines.join('\n');
      for (const secret of [tenant.key, created.body.data.plain_key, ADMIN_TOKEN, created.body.data.plain_key.slice(8, 40)]) {
        expect(text).to.not.include(secret);
      }
      const requests = lines.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');
      expect(requests).to.have.length(3);
      expect(requests[0]).to.include({ method: 'POST', status: 201, operation_id: 'createApiKey' });
      expect(requests[0].request_id).to.equal(created.body.meta.request_id);
      const refused = await call('GET', '/account', { baseUrl: instance.baseUrl });
      expect(refused.status).to.equal(401);
      const refusedLine = lines
        .map((line) => JSON.parse(line))
        .filter((line) => line.msg === 'request')
        .at(-1);
      expect(refusedLine).to.include({ status: 401, operation_id: 'getAccount' });
    } finally {
      await instance.stop();
    }
  });
});

describe('GET /healthz and /readyz', () => {
  it('answers that the process is alive and the database ready', async () => {
    const root = harness.baseUrl.replace('/api/v1', '');
    expect(await (await fetch(`${root}/healthz`)).json()).to.deep.equal({ status: 'ok' });
    const ready = await fetch(`${root}/readyz`);
    expect(ready.status).to.equal(200);
    expect(await ready.json()).to.deep.equal({ status: 'ready' });
  });
});
