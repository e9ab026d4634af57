import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { freePort } from '../../app/free-port.ts';
import { createLogger } from '../../app/logger.ts';
import type { Dispatch } from '../../app/server.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { call, type AnswerData } from '../support/client.ts';
import { eventually } from '../support/fixtures.ts';
import { ADMIN_TOKEN, startInstance, TEST_WEBHOOK_ENV } from '../support/harness.ts';
import { siblingDatabase } from '../support/sibling-database.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

type LogRecord = Record<string, unknown>;

/** A Dispatch of this test's own (on a database of its own, so that no other instance takes its jobs), whose log records are kept. */
describe('logs', function () {
  this.timeout(60_000);
  let sibling: Awaited<ReturnType<typeof siblingDatabase>>;
  let dispatch: Dispatch;
  const records: LogRecord[] = [];
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    sibling = await siblingDatabase();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) records.push(JSON.parse(line));
        done();
      },
    });
    dispatch = await startInstance(sibling.url, {}, createLogger('info', sink));
  });

  after(async () => {
    await dispatch?.stop();
    for (const receiver of receivers) await receiver.stop();
    await sibling?.drop();
  });

  const admin = async <M extends string, P extends string>(method: M, path: P, body?: object): Promise<AnswerData<M, P>> => {
    const response = await call(method, path, { auth: 'admin', baseUrl: dispatch.baseUrl, body });
    expect(response.status, JSON.stringify(response.body)).to.be.oneOf([200, 201]);
    return response.body.data;
  };

  /** An account with an approved sender and these simulator routes, in priority order. */
  async function tenant(outcomes: string[]) {
    const account = await admin('POST', '/admin/accounts', { email: `logs-${randomBase62(10).toLowerCase()}@example.com`, name: 'Logs', balance: 10 });
    const key = await admin('POST', `/admin/accounts/${account.id}/api-keys`, { name: 'All' });
    const sender = (await call('POST', '/senders/create', { auth: key.plain_key, baseUrl: dispatch.baseUrl, body: { sender_id: 'Dispatch' } })).body.data;
    await admin('POST', `/admin/senders/${sender.id}/approve`);
    const routes = [];
    for (const [priority, outcome] of outcomes.entries()) {
      const route = await admin('POST', '/admin/routes', {
        name: `logs-${outcome}-${randomBase62(6)}`,
        provider: 'simulator',
        config: { outcome, dlr_delay_ms: 20 },
        price_per_segment: 0.01,
      });
      await admin('PUT', `/admin/accounts/${account.id}/routes/${route.id}`, { priority });
      routes.push(route);
    }
    return { accountId: account.id, key: key.plain_key, keyId: key.id, routes };
  }

  const send = async (key: string) => {
    const response = await call('POST', '/messages/send', {
      auth: key,
      baseUrl: dispatch.baseUrl,
      body: { to: '+14155550123', from: 'Dispatch', body: 'Logged' },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    return response.body.data.id;
  };
  const message = async (key: string, id: string) => (await call('GET', `/messages/${id}`, { auth: key, baseUrl: dispatch.baseUrl })).body.data;
  const logged = (what: string, match: (record: LogRecord) => boolean) =>
    eventually(
      () => records.filter(match),
      (found) => found.length > 0,
      { what },
    );

  it('logs every failed upstream submission at warn with the route name, the message id, the outcome and the error', async () => {
    const { key, routes } = await tenant(['unavailable', 'rejected']);
    const id = await send(key);
    await eventually(
      () => message(key, id),
      (m) => m.status === 'failed',
      { what: 'the message failed' },
    );
    const failures = records.filter((record) => record.msg === 'upstream submission failed' && record.message_id === id);
    expect(failures.map((record) => [record.level, record.route, record.route_id, record.outcome, record.code])).to.deep.equal([
      [40, routes[0].name, routes[0].id, 'retryable', 'provider_unavailable'],
      [40, routes[1].name, routes[1].id, 'rejected', 'provider_rejected'],
    ]);
    expect(failures[0].reason).to.equal('The simulator is unavailable.');
  });

  it('shows a pending message its last upstream error while it retries, and clears it once it is sent', async () => {
    const { key, routes } = await tenant(['unavailable']);
    const id = await send(key);
    const pending = await eventually(
      () => message(key, id),
      (m) => m.error !== null,
      { what: 'the retrying message to show its error' },
    );
    expect(pending.status).to.equal('pending');
    expect(pending.error).to.deep.equal({ type: 'provider_error', code: 'provider_unavailable', message: 'The simulator is unavailable.' });
    // The route recovers: the next try (the send job's first retry, 5 s on) sends it.
    await admin('PATCH', `/admin/routes/${routes[0].id}`, { config: { outcome: 'delivered', dlr_delay_ms: 20 } });
    const sent = await eventually(
      () => message(key, id),
      (m) => m.status !== 'pending',
      { what: 'the message sent', timeoutMs: 30_000 },
    );
    expect(sent.status).to.be.oneOf(['sent', 'delivered']);
    expect(sent.error).to.equal(null);
  });

  it('logs every failed webhook attempt at warn with the endpoint, the event, the outcome and the status', async () => {
    const { key } = await tenant(['rejected']);
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.answerWith(503);
    const endpoint = (await call('POST', '/webhooks/create', { auth: key, baseUrl: dispatch.baseUrl, body: { url: receiver.url } })).body.data;
    await send(key);
    const attempts = TEST_WEBHOOK_ENV.WEBHOOK_RETRY_SCHEDULE.split(',').length;
    const failures = await eventually(
      () => records.filter((record) => record.msg === 'webhook attempt failed' && record.endpoint_id === endpoint.id),
      (found) => found.length === attempts,
      { what: 'every attempt logged' },
    );
    expect(failures.map((record) => [record.level, record.attempt, record.outcome, record.reason, record.status_code, record.error])).to.deep.equal([
      [40, 1, 'will_retry', 'http_status', 503, 'HTTP 503'],
      [40, 2, 'will_retry', 'http_status', 503, 'HTTP 503'],
      [40, 3, 'abandoned', 'http_status', 503, 'HTTP 503'],
    ]);
    expect(new Set(failures.map((record) => record.event_id)).size).to.equal(1);
    expect(failures[0].event_id).to.match(/^evt_/);
  });

  it("writes the caller's account and API key on each request line, refused requests included", async () => {
    const { accountId, key, keyId } = await tenant([]);
    const served = await call('GET', '/account', { auth: key, baseUrl: dispatch.baseUrl });
    const refused = await call('GET', '/messages/msg_doesnotexist', { auth: key, baseUrl: dispatch.baseUrl });
    for (const response of [served, refused]) {
      const [line] = await logged('the request line', (record) => record.msg === 'request' && record.request_id === response.body.meta.request_id);
      expect(line).to.include({ account_id: accountId, api_key_id: keyId, status: response.status });
    }
    const anonymous = await call('GET', '/account', { baseUrl: dispatch.baseUrl });
    const [line] = await logged('the anonymous request line', (record) => record.msg === 'request' && record.request_id === anonymous.body.meta.request_id);
    expect(line.status).to.equal(401);
    expect(line).to.not.have.any.keys('account_id', 'api_key_id');
  });

  it("writes the admin caller's operator on each admin request line, and never an operator's token", async () => {
    const operator = await admin('POST', '/admin/operators', { name: `Logged ${randomBase62(6)}`, role: 'viewer' });
    const served = await call('GET', '/admin/operators/current', { auth: operator.token, baseUrl: dispatch.baseUrl });
    const refused = await call('GET', '/admin/operators', { auth: operator.token, baseUrl: dispatch.baseUrl });
    for (const response of [served, refused]) {
      const [line] = await logged('the request line', (record) => record.msg === 'request' && record.request_id === response.body.meta.request_id);
      expect(line).to.include({ operator_id: operator.id, status: response.status });
    }
    const [root] = await logged('the operator creation line', (record) => record.msg === 'request' && record.operation_id === 'adminCreateOperator');
    expect(root.operator_id).to.equal('root');
    expect(JSON.stringify(records)).to.not.include(operator.token);
  });

  describe('the process', () => {
    /** `node app/main.ts` with this environment, until it exits or `until` shows on stderr; stdout and stderr apart. */
    function run(env: Record<string, string>, until?: RegExp) {
      const child = spawn(process.execPath, ['app/main.ts'], { env: { ...process.env, ADMIN_TOKEN, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      const out = { stdout: '', stderr: '' };
      child.stdout.on('data', (chunk) => (out.stdout += chunk));
      child.stderr.on('data', (chunk) => (out.stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      const ready =
        until &&
        eventually(
          () => out.stderr,
          (text) => until.test(text) || child.exitCode !== null,
          { what: 'the process to start', timeoutMs: 30_000 },
        );
      return { child, out, exited, ready };
    }

    const closedDatabase = async () => `postgres://dispatch:secret@127.0.0.1:${await freePort()}/dispatch`;

    it('writes only JSON records to stdout; the start banner goes to stderr', async () => {
      const started = run({ DATABASE_URL: sibling.url, LOG_LEVEL: 'info', WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...TEST_WEBHOOK_ENV }, /listening on (\S+)/);
      await started.ready;
      const baseUrl = /listening on (\S+)/.exec(started.out.stderr)?.[1] as string;
      expect(baseUrl, started.out.stderr).to.match(/^http:/);
      expect((await call('GET', '/account', { baseUrl })).status).to.equal(401);
      await eventually(
        () => started.out.stdout,
        (text) => text.includes('"msg":"request"'),
        { what: 'the request line' },
      );
      started.child.kill('SIGTERM');
      expect(await started.exited).to.equal(0);
      const lines = started.out.stdout.trim().split('\n');
      expect(lines.length).to.be.at.least(3);
      for (const line of lines) expect(() => JSON.parse(line), line).to.not.throw();
      expect(lines.map((line) => JSON.parse(line).msg)).to.include.members(['listening', 'request', 'stopped']);
    });

    it('retries an unreachable database with one line, then gives up with one more and exits 1, without a stack trace', async () => {
      const stopped = run({ DATABASE_URL: await closedDatabase(), DATABASE_CONNECT_TIMEOUT_SECONDS: '2' });
      expect(await stopped.exited).to.equal(1);
      expect(stopped.out.stderr).to.equal('');
      const lines = stopped.out.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => [line.level, line.msg])).to.deep.equal([
        [40, 'database unreachable: retrying with backoff'],
        [50, 'database unreachable: giving up (DATABASE_CONNECT_TIMEOUT_SECONDS)'],
      ]);
      expect(lines[0]).to.include({ retry_for_seconds: 2 });
      expect(lines[0].error).to.match(/ECONNREFUSED/);
      expect(lines[1].attempts).to.be.above(1);
      expect(stopped.out.stdout).to.not.include('secret');
      expect(stopped.out.stdout).to.not.match(/\n\s+at /);
    });

    it('writes plain lines for a person with LOG_FORMAT=pretty', async () => {
      const stopped = run({ DATABASE_URL: await closedDatabase(), DATABASE_CONNECT_TIMEOUT_SECONDS: '0', LOG_FORMAT: 'pretty' });
      expect(await stopped.exited).to.equal(1);
      const lines = stopped.out.stdout.trim().split('\n');
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(
        /^\d\d:\d\d:\d\d\.\d{3} ERROR database unreachable: giving up \(DATABASE_CONNECT_TIMEOUT_SECONDS\) error=.*ECONNREFUSED.* attempts=1 timeout_seconds=0$/,
      );
    });
  });
});
