import { connect as connectTcp } from 'node:net';
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import yaml from 'js-yaml';
import type { Operation } from 'openapi-backend';
import { DEFINITION_PATH } from '../../app/api.ts';
import { call, expectError, loadContract, type Schemas } from '../support/client.ts';
import { createTenant, sendingTenant, type Tenant } from '../support/fixtures.ts';
import { ADMIN_TOKEN, harness } from '../support/harness.ts';

/** Defect 7: each class of hostile input answers 400 in the envelope, naming the field, never 500. */
describe('hostile input', () => {
  let tenant: Tenant & { routeIds: number[] };
  before(async () => {
    tenant = await sendingTenant();
  });

  const send = { to: '+14155550123', from: 'Dispatch', body: 'Hi' };
  // [what, method, path, who calls, body, the param named]
  const cases: [string, string, string, 'key' | 'admin', unknown, string][] = [
    ['a NUL in a body string', 'POST', '/senders/create', 'key', { sender_id: 'Acme\u0000' }, 'sender_id'],
    [
      'a NUL in a nested field',
      'POST',
      '/admin/routes',
      'admin',
      { name: 'n', provider: 'http', price_per_segment: 0, config: { url: 'http://x\u0000' } },
      'config.url',
    ],
    ['a NUL in an array item', 'POST', '/messages/bulk', 'key', { ...send, to: undefined, recipients: ['+14155550123', 'a\u0000'] }, 'recipients[1]'],
    ['an unpaired surrogate in an array item', 'POST', '/messages/bulk', 'key', { ...send, to: undefined, recipients: ['\ud800'] }, 'recipients[0]'],
    ['an unpaired surrogate in a string', 'POST', '/messages/send', 'key', { ...send, from: 'Acme\udc00' }, 'from'],
    ['a NUL in a field name', 'POST', '/api-keys/create', 'key', { name: 'n', 'ex\u0000tra': 1 }, 'ex\u0000tra'],
    ['a NUL in a query value', 'GET', '/messages?to=%2B1%00', 'key', undefined, 'to'],
    ['a NUL in a path id', 'GET', '/senders/snd_%00', 'key', undefined, 'id'],
    ['a percent-escape that is not UTF-8 in a path id', 'GET', '/senders/%FF', 'key', undefined, 'id'],
    ['a truncated UTF-8 escape in a path id', 'GET', '/messages/%E2%82', 'key', undefined, 'id'],
    ['an overlong UTF-8 escape in a path number', 'DELETE', '/admin/blocklist/%C0%AF', 'admin', undefined, 'number'],
    ['a daily limit past 32 bits', 'POST', '/api-keys/create', 'key', { name: 'n', daily_limit: 2147483648 }, 'daily_limit'],
    ['a route id past 32 bits in the path', 'GET', '/admin/routes/2147483648', 'admin', undefined, 'id'],
    ['a route id past 32 bits in a body', 'POST', '/messages/send', 'key', { ...send, route_id: 2147483648 }, 'route_id'],
    ['a page past 32 bits', 'GET', '/messages?page=2147483648', 'key', undefined, 'page'],
    ['a route id in exponent form', 'GET', '/admin/routes/1e3', 'admin', undefined, 'id'],
    ['a route id in hexadecimal', 'GET', '/admin/routes/0x10', 'admin', undefined, 'id'],
    ['a route id with a fraction', 'GET', '/admin/routes/2.0', 'admin', undefined, 'id'],
    ['a route id with a leading space', 'GET', '/admin/routes/%201', 'admin', undefined, 'id'],
    ['a page limit in exponent form', 'GET', '/messages?limit=1e1', 'key', undefined, 'limit'],
    ['a leap second', 'GET', '/messages?created_before=2025-06-30T23:59:60Z', 'key', undefined, 'created_before'],
    ['year 0', 'GET', '/messages?created_after=0000-01-01T00:00:00Z', 'key', undefined, 'created_after'],
    ['an offset that moves year 1 into year 0', 'GET', '/messages?created_after=0001-01-01T00:00:00%2B01:00', 'key', undefined, 'created_after'],
    ['a leap second in a body', 'POST', '/api-keys/create', 'key', { name: 'n', expires_at: '2030-06-30T23:59:60Z' }, 'expires_at'],
    ['a credit past numeric(18,4)', 'POST', '/admin/accounts/{account}/credit', 'admin', { amount: 1e15 }, 'amount'],
    ['a credit too large to print as a decimal', 'POST', '/admin/accounts/{account}/credit', 'admin', { amount: 1e21 }, 'amount'],
    ['an opening balance past numeric(18,4)', 'POST', '/admin/accounts', 'admin', { email: 'big@example.com', name: 'Big', balance: 1e15 }, 'balance'],
    [
      'a price past numeric(18,4)',
      'POST',
      '/admin/routes',
      'admin',
      { name: 'n', provider: 'simulator', config: { outcome: 'delivered' }, price_per_segment: 1e21 },
      'price_per_segment',
    ],
  ];
  for (const [what, method, path, who, body, param] of cases) {
    it(`answers 400 parameter_invalid naming ${JSON.stringify(param)} to ${what}`, async () => {
      const response = await call(method, path.replace('{account}', tenant.accountId), { auth: who === 'admin' ? 'admin' : tenant.key, body });
      expectError(response, 400, 'parameter_invalid', param);
      expect(response.body.error.message).to.not.match(/\^|\$\)|RangeError|syntax/);
    });
  }

  it('answers 400 invalid_request to a body nested deeper than 32 levels, however deep', async () => {
    for (const depth of [33, 100_000]) {
      const response = await call('POST', '/senders/create', { auth: tenant.key, rawBody: `${'['.repeat(depth)}${']'.repeat(depth)}` });
      expectError(response, 400, 'invalid_request');
    }
  });

  it('stores nothing for any of them', async () => {
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(0);
    expect(await harness.db('senders').where({ account_id: tenant.accountId, sender_id: 'Acme' })).to.have.length(0);
  });
});

describe('validation messages', () => {
  it('say what a valid value looks like, as the document promises, never the pattern', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '4155550123', from: 'Dispatch', body: 'Hi' } });
    expectError(response, 400, 'parameter_invalid', 'to');
    expect(response.body.error.message).to.equal('to must be an E.164 number such as +447400123456.');
  });

  it('name the format, the type and the range in words', async () => {
    const tenant = await createTenant();
    const messages = async (method: string, path: string, body?: unknown) =>
      (await call(method, path, { auth: tenant.key, body })).body.error.details!.errors!.map((error) => error.message);
    expect(await messages('GET', '/messages?created_after=yesterday')).to.deep.equal([
      'created_after must be an RFC 3339 date-time such as 2025-11-21T14:03:27.512Z.',
    ]);
    expect(
      await messages('POST', '/api-keys/create', { name: 'n', rate_limit: 'many', daily_limit: 'x', monthly_limit: 0, allowed_ips: ['10.0.0.300'] }),
    ).to.have.members([
      'rate_limit must be an integer.',
      'daily_limit must be an integer or null.',
      'monthly_limit must be at least 1.',
      'allowed_ips[0] must be an IPv4 address or CIDR range such as 203.0.113.7 or 198.51.100.0/24.',
    ]);
  });

  it('have a hint (x-expected) for every pattern a request can break', () => {
    const document = yaml.load(readFileSync(DEFINITION_PATH, 'utf8')) as {
      components: { schemas: Record<string, unknown>; parameters: Record<string, { schema: unknown }> };
    };
    const missing: string[] = [];
    const walk = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const schema = node as { pattern?: string; 'x-expected'?: string; properties?: Record<string, unknown>; items?: unknown };
      if (schema.pattern && !schema['x-expected']) missing.push(where);
      for (const [name, property] of Object.entries(schema.properties ?? {})) walk(property, `${where}.${name}`);
      if (schema.items) walk(schema.items, `${where}[]`);
    };
    for (const [name, schema] of Object.entries(document.components.schemas)) if (name.endsWith('Request')) walk(schema, name);
    for (const [name, parameter] of Object.entries(document.components.parameters)) walk(parameter.schema, name);
    expect(missing).to.deep.equal([]);
  });
});

describe('HEAD', () => {
  it('answers a GET operation like GET, headers and all, without the body', async () => {
    const tenant = await createTenant();
    const got = await call('GET', '/account', { auth: tenant.key });
    const head = await fetch(`${harness.baseUrl}/account`, { method: 'HEAD', headers: { authorization: `Bearer ${tenant.key}` } });
    expect(head.status).to.equal(got.status);
    expect(await head.text()).to.equal('');
    expect(head.headers.get('content-type')).to.equal(got.headers.get('content-type'));
    expect(head.headers.get('x-request-id')).to.match(/^req_/);
    expect(head.headers.get('ratelimit-policy')).to.equal(got.headers.get('ratelimit-policy'));
  });

  it('answers a refusal with its status and no body, and names HEAD among the allowed methods', async () => {
    const tenant = await createTenant();
    const missing = await fetch(`${harness.baseUrl}/messages/msg_000000000000000000000000`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${tenant.key}` },
    });
    expect(missing.status).to.equal(404);
    expect(await missing.text()).to.equal('');
    const postOnly = await fetch(`${harness.baseUrl}/admin/accounts/acct_000000000000000000000000/credit`, {
      method: 'HEAD',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(postOnly.status).to.equal(405);
    expect(postOnly.headers.get('allow')).to.equal('POST');
    expect((await call('DELETE', '/account', { auth: tenant.key })).headers.get('allow')).to.equal('GET, HEAD, PATCH');
  });
});

/** Writes raw bytes to Dispatch and reads everything it answers until it closes the connection. */
function rawExchange(request: string): Promise<{ status: number; headers: Record<string, string>; body: unknown }> {
  const { hostname, port } = new URL(harness.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), hostname, () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...headerLines] = head.split('\r\n');
      const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const bodyText = rest.join('\r\n\r\n');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: bodyText ? JSON.parse(bodyText) : undefined });
    });
  });
}

describe('requests Node refuses before Dispatch reads them', () => {
  /** The error envelope, as openapi.yaml defines it, with the request id also in the header. */
  async function expectEnvelope(answer: { headers: Record<string, string>; body: unknown }, code: string): Promise<void> {
    const api = await loadContract();
    const operation = api.getOperation('sendMessage') as Operation;
    const result = api.validator.validateResponse(answer.body, operation, 400);
    expect(result.errors ?? [], JSON.stringify(answer.body)).to.deep.equal([]);
    // Valid, as just checked:
    const body = answer.body as Schemas['ErrorEnvelope'];
    expect(body.error.code).to.equal(code);
    expect(answer.headers['content-type']).to.match(/^application\/json/);
    expect(answer.headers['x-request-id']).to.equal(body.meta.request_id);
  }

  it('answers headers over 16 KiB with 431 in the JSON envelope', async () => {
    const answer = await rawExchange(`GET /api/v1/account HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).to.equal(431);
    await expectEnvelope(answer, 'header_too_large');
  });

  it('answers a Content-Length that is not a number with 400 in the JSON envelope', async () => {
    const answer = await rawExchange('POST /api/v1/senders/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ten\r\n\r\n{}');
    expect(answer.status).to.equal(400);
    await expectEnvelope(answer, 'invalid_request');
  });

  it('answers a Content-Length beside chunked transfer encoding with 400 in the JSON envelope', async () => {
    const answer = await rawExchange(
      'POST /api/v1/senders/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n',
    );
    expect(answer.status).to.equal(400);
    await expectEnvelope(answer, 'invalid_request');
  });
});
