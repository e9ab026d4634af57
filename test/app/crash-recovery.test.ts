import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import pg from 'pg';
import { call } from '../support/client.ts';
import { ADMIN_TOKEN, TEST_WEBHOOK_ENV } from '../support/harness.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { siblingDatabase } from '../support/sibling-database.ts';
import { eventually, sendingTenant } from '../support/fixtures.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

/** A Dispatch in its own OS process, so that it can be killed the hard way. */
async function startProcess(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<{ child: ChildProcess; baseUrl: string }> {
  const env = {
    ...process.env,
    ...TEST_WEBHOOK_ENV,
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    PORT: '0',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const child = spawn(process.execPath, ['app/main.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start:\n${output}`)), 30_000);
    // "listening on" goes to stderr: stdout carries only log records.
    child.stderr.on('data', (chunk) => {
      output += chunk;
      const found = /listening on (\S+)/.exec(output);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
    child.stdout.on('data', (chunk) => (output += chunk));
  });
  return { child, baseUrl };
}

describe('a Dispatch process killed during a webhook delivery', function () {
  this.timeout(90_000);
  let database: Awaited<ReturnType<typeof siblingDatabase>>;
  let databaseUrl: string;
  let receiver: WebhookReceiver;

  before(async () => {
    database = await siblingDatabase();
    databaseUrl = database.url;
    receiver = await WebhookReceiver.start();
  });

  after(async () => {
    await receiver.stop();
    await database.drop();
  });

  it('hands providers an absolute delivery-report URL from PUBLIC_URL when a send job is due at start', async () => {
    const provider = await FakeHttpProvider.start();
    const first = await startProcess(databaseUrl);
    const baseUrl = first.baseUrl;
    try {
      const { key } = await sendingTenant({ baseUrl, balance: 1, routes: [{ provider: 'http', config: { url: provider.url } }] });

      // The provider is down for now: the send job waits to be retried when the process dies.
      provider.behave({ status: 503 });
      const sent = (await call('POST', '/messages/send', { auth: key, baseUrl, body: { to: '+14155550123', from: 'Dispatch', body: 'Due' } })).body.data;
      await provider.waitForRequests(1);
      const jobs = new pg.Client({ connectionString: databaseUrl });
      await jobs.connect();
      const waitForJob = (condition: string) =>
        eventually(
          async () =>
            (await jobs.query(`SELECT 1 FROM pgboss.job WHERE name = 'send-message' AND data->'message_ids' @> to_jsonb($1::text) AND ${condition}`, [sent.id]))
              .rows.length,
          (found) => found > 0,
          { timeoutMs: 30_000, what: `the send job to match ${condition}` },
        );
      try {
        await waitForJob(`state = 'retry'`);
        first.child.kill('SIGKILL');
        await new Promise((resolve) => first.child.once('exit', resolve));
        await waitForJob(`state = 'retry' AND start_after <= now()`);
      } finally {
        await jobs.end();
      }

      provider.behave({ accept: true });
      const second = await startProcess(databaseUrl, { PUBLIC_URL: 'https://dispatch.example.test' });
      try {
        await provider.waitForRequests(2, 30_000);
        expect(provider.requests[1].body.message_id).to.equal(sent.id);
        expect(provider.requests[1].body.dlr_url).to.match(/^https:\/\/dispatch\.example\.test\/callbacks\/dlr\/[0-9A-Za-z]{32}$/);
      } finally {
        second.child.kill('SIGTERM');
        await new Promise((resolve) => second.child.once('exit', resolve));
      }
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      await provider.stop();
    }
  });

  it('delivers the event after a restart: nothing is lost between the status change and the delivery', async () => {
    const first = await startProcess(databaseUrl);
    const baseUrl = first.baseUrl;
    const { key } = await sendingTenant({ baseUrl, balance: 1, routes: [{ config: { outcome: 'delivered', dlr_delay_ms: 600_000 } }] });
    await call('POST', '/webhooks/create', { auth: key, baseUrl, body: { url: receiver.url } });

    receiver.answerWith((index) => (index === 0 ? 'hang' : 200));
    await call('POST', '/messages/send', { auth: key, baseUrl, body: { to: '+14155550123', from: 'Dispatch', body: 'Survives' } });
    await receiver.waitFor((received) => received.length >= 1);
    first.child.kill('SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));

    const second = await startProcess(databaseUrl);
    try {
      await receiver.waitFor((received) => received.length >= 2, 60_000);
      expect(receiver.received[1].event.id).to.equal(receiver.received[0].event.id);
      expect(receiver.received[1].event.type).to.equal('message.sent');
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((resolve) => second.child.once('exit', resolve));
    }
  });
});
