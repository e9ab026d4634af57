import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ApiError, Dispatch, DispatchConnectionError, InvalidRequestError, RateLimitError, retryDelayMs } from '../../sdk/index.ts';

// The SDK's retry rules against a tiny local server that answers whatever a test scripts.

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Sent as-is (not JSON). */
  raw?: string;
}

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

const meta = { request_id: 'req_mock0000000000000000000', api_version: 'v1' };
const ok = (data: unknown, status = 200): Scripted => ({ status, body: { success: true, data, meta } });
const failure = (status: number, type: string, code: string, headers: Record<string, string> = {}): Scripted => ({
  status,
  headers,
  body: { success: false, error: { type, code, message: `${code} (scripted)` }, meta },
});
const balance = { object: 'balance', balance: 5, currency: 'USD', as_of: '2025-11-21T14:03:27.512Z' };
const message = {
  id: 'msg_mock000000000000000000000',
  object: 'message',
  to: '+14155550123',
  from: 'Dispatch',
  body: 'Hi',
  status: 'pending',
  cost: 0.01,
  currency: 'USD',
  route_id: 1,
  provider_message_id: null,
  attempts: 0,
  error: null,
  reference: null,
  segments: 1,
  encoding: 'GSM-7',
  created_at: '2025-11-21T14:03:27.512Z',
  sent_at: null,
  delivered_at: null,
  failed_at: null,
};
const endpoint = {
  id: 'whe_mock000000000000000000000',
  object: 'webhook_endpoint',
  url: 'https://example.com/hook',
  description: null,
  events: ['*'],
  is_active: true,
  failure_count: 0,
  last_success_at: null,
  last_failure_at: null,
  disabled_at: null,
  created_at: '2025-11-21T14:03:27.512Z',
  signing_secret: 'whsec_mock',
};

/** A server answering the scripted responses in order (the last one repeats), recording every request. */
async function scriptedServer(script: Scripted[]) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const answer = script[Math.min(seen.length - 1, script.length - 1)];
      const payload = answer.raw ?? JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        'content-type': answer.raw === undefined ? 'application/json' : 'text/html',
        'x-request-id': meta.request_id,
        ...answer.headers,
      });
      res.end(payload);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  return { seen, baseUrl, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** The call's result or its error. How long the SDK waits between attempts is retryDelayMs's to say (tested below), not a clock's. */
async function outcome<T>(run: () => Promise<T>): Promise<{ result: T | undefined; error: unknown }> {
  try {
    return { result: await run(), error: undefined };
  } catch (error) {
    return { result: undefined, error };
  }
}

describe('SDK retries', () => {
  let server: Awaited<ReturnType<typeof scriptedServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('retries a 503 with backoff and answers the eventual success', async () => {
    server = await scriptedServer([failure(503, 'api_error', 'internal_error'), failure(503, 'api_error', 'internal_error'), ok(balance)]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { result, error } = await outcome(() => dispatch.balance.get());
    expect(error).to.equal(undefined);
    expect(result).to.deep.equal(balance);
    expect(server.seen).to.have.length(3);
    expect(server.seen[0].headers.authorization).to.equal('Bearer ds_live_mock');
    expect(server.seen[0].headers['user-agent']).to.match(/^dispatch-sdk-typescript\//);
  });

  it('gives up after maxRetries and throws the last error, typed', async () => {
    server = await scriptedServer([failure(503, 'api_error', 'internal_error')]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl, maxRetries: 1 });
    const { error } = await outcome(() => dispatch.account.get());
    expect(error).to.be.instanceOf(ApiError);
    expect(error).to.include({ status: 503, type: 'api_error', code: 'internal_error', requestId: meta.request_id });
    expect(server.seen).to.have.length(2);
  });

  it('honours Retry-After on a 429', async () => {
    server = await scriptedServer([failure(429, 'rate_limit_error', 'rate_limit_exceeded', { 'retry-after': '1' }), ok(balance)]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { result } = await outcome(() => dispatch.balance.get());
    expect(result).to.deep.equal(balance);
    expect(server.seen).to.have.length(2);
  });

  it('does not wait out a Retry-After beyond 60 seconds (a daily limit): it throws at once', async () => {
    server = await scriptedServer([failure(429, 'rate_limit_error', 'daily_limit_exceeded', { 'retry-after': '3600' }), ok(message, 201)]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { error } = await outcome(() => dispatch.messages.send({ to: '+14155550123', from: 'Dispatch', body: 'Hi' }));
    expect(error).to.be.instanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).to.equal(3600);
    expect((error as RateLimitError).code).to.equal('daily_limit_exceeded');
    expect(server.seen).to.have.length(1);
  });

  it('sends every retry of a send with the same Idempotency-Key, generated when none is given', async () => {
    server = await scriptedServer([
      failure(500, 'api_error', 'internal_error'),
      failure(409, 'invalid_request_error', 'idempotency_key_in_use'),
      ok(message, 201),
    ]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const sent = await dispatch.messages.send({ to: '+14155550123', from: 'Dispatch', body: 'Hi' });
    expect(sent.id).to.equal(message.id);
    expect(server.seen).to.have.length(3);
    const keys = server.seen.map((request) => request.headers['idempotency-key']);
    expect(keys[0]).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys).size).to.equal(1);
    expect(JSON.parse(server.seen[2].body)).to.deep.equal({ to: '+14155550123', from: 'Dispatch', body: 'Hi' });
    expect(server.seen[0].headers['content-type']).to.equal('application/json');
  });

  it('uses the idempotency key it is given, and a fresh one per call otherwise', async () => {
    server = await scriptedServer([ok(message, 201)]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    await dispatch.messages.bulk({ recipients: ['+14155550123'], from: 'Dispatch', body: 'Hi' }, { idempotencyKey: 'order-42' });
    await dispatch.messages.send({ to: '+14155550123', from: 'Dispatch', body: 'Hi' });
    await dispatch.messages.send({ to: '+14155550123', from: 'Dispatch', body: 'Hi' });
    expect(server.seen.map((request) => request.url)).to.deep.equal(['/api/v1/messages/bulk', '/api/v1/messages/send', '/api/v1/messages/send']);
    expect(server.seen[0].headers['idempotency-key']).to.equal('order-42');
    expect(server.seen[1].headers['idempotency-key']).to.not.equal(server.seen[2].headers['idempotency-key']);
  });

  it('never retries a create without an idempotency key after a 5xx, but does after a 429', async () => {
    server = await scriptedServer([failure(503, 'api_error', 'internal_error')]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { error } = await outcome(() => dispatch.webhooks.create({ url: 'https://example.com/hook' }));
    expect(error).to.be.instanceOf(ApiError);
    expect(server.seen).to.have.length(1);
    await server.close();

    server = await scriptedServer([failure(429, 'rate_limit_error', 'rate_limit_exceeded', { 'retry-after': '0' }), ok(endpoint, 201)]);
    const again = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    expect((await again.webhooks.create({ url: 'https://example.com/hook' })).signing_secret).to.equal('whsec_mock');
    expect(server.seen).to.have.length(2);
  });

  it('never retries another 4xx', async () => {
    server = await scriptedServer([
      { status: 400, body: { success: false, error: { type: 'invalid_request_error', code: 'parameter_invalid', message: 'bad', param: 'limit' }, meta } },
    ]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { error } = await outcome(() => dispatch.messages.list({ limit: 2 }));
    expect(error).to.be.instanceOf(InvalidRequestError);
    expect(error).to.include({ status: 400, code: 'parameter_invalid', param: 'limit' });
    expect(server.seen).to.have.length(1);
    expect(server.seen[0].url).to.equal('/api/v1/messages?limit=2');
  });

  it("types an answer without the error envelope (a proxy's 502 page) as an ApiError", async () => {
    server = await scriptedServer([{ status: 502, raw: '<html>Bad Gateway</html>' }]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl, maxRetries: 0 });
    const { error } = await outcome(() => dispatch.account.get());
    expect(error).to.be.instanceOf(ApiError);
    expect(error).to.include({ status: 502, type: 'api_error', code: 'unexpected_response' });
    expect((error as Error).message).to.contain('Bad Gateway');
  });

  it('types a success that is not JSON as an ApiError rather than a SyntaxError', async () => {
    server = await scriptedServer([{ status: 200, raw: '<html>captive portal</html>' }]);
    const dispatch = new Dispatch({ apiKey: 'ds_live_mock', baseUrl: server.baseUrl });
    const { error } = await outcome(() => dispatch.balance.get());
    expect(error).to.be.instanceOf(ApiError);
    expect(error).to.include({ status: 200, code: 'unexpected_response' });
    expect(server.seen).to.have.length(1);
  });

  it('retries a network failure and then throws a DispatchConnectionError', async () => {
    const closed = await scriptedServer([ok(balance)]);
    await closed.close();
    let attempts = 0;
    const dispatch = new Dispatch({
      apiKey: 'ds_live_mock',
      baseUrl: closed.baseUrl,
      maxRetries: 1,
      fetch: (input, init) => {
        attempts++;
        return fetch(input, init);
      },
    });
    const { error } = await outcome(() => dispatch.balance.get());
    expect(error).to.be.instanceOf(DispatchConnectionError);
    expect(error).to.include({ status: 0, code: 'connection_error', requestId: null });
    expect((error as Error).cause).to.be.instanceOf(Error);
    expect(attempts).to.equal(2);
  });
});

describe('SDK retry delays (retryDelayMs)', () => {
  const fields = { type: 'api_error' as const, message: 'scripted', requestId: null };
  const serverError = new ApiError({ ...fields, status: 503, code: 'internal_error' });
  const rateLimited = (retryAfter: number | null) =>
    new RateLimitError({ ...fields, status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', retryAfter });
  /** Many draws of a jittered delay: every one must fall in [low, high]. */
  const draws = (run: () => number | null) => Array.from({ length: 200 }, run);

  it('backs off 0.5 s, 1 s, 2 s ... capped at 8 s, each minus up to 25 % jitter', () => {
    for (const [retry, full] of [
      [0, 500],
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [4, 8000],
      [9, 8000],
    ]) {
      for (const delay of draws(() => retryDelayMs(serverError, retry, true))) expect(delay, `retry ${retry}`).to.be.within(full * 0.75, full);
    }
    for (const delay of draws(() => retryDelayMs(new DispatchConnectionError(new Error('refused')), 0, true))) expect(delay).to.be.within(375, 500);
  });

  it('waits exactly Retry-After on a 429, backs off when it is absent, and gives up beyond 60 s', () => {
    expect(retryDelayMs(rateLimited(1), 0, false)).to.equal(1000);
    expect(retryDelayMs(rateLimited(60), 3, false)).to.equal(60_000);
    expect(retryDelayMs(rateLimited(61), 0, true)).to.equal(null);
    expect(retryDelayMs(rateLimited(3600), 0, true)).to.equal(null);
    for (const delay of draws(() => retryDelayMs(rateLimited(null), 1, false))) expect(delay).to.be.within(750, 1000);
  });

  it('never waits to repeat what must not be repeated: a 5xx of a call that is not idempotent, or another 4xx', () => {
    expect(retryDelayMs(serverError, 0, false)).to.equal(null);
    expect(retryDelayMs(new InvalidRequestError({ ...fields, status: 400, type: 'invalid_request_error', code: 'parameter_invalid' }), 0, true)).to.equal(null);
    expect(retryDelayMs(new ApiError({ ...fields, status: 409, type: 'invalid_request_error', code: 'idempotency_key_in_use' }), 0, false)).to.be.within(
      375,
      500,
    );
  });
});
