import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { call } from '../support/client.ts';
import type { Page, Schemas } from '../support/client.ts';
import { sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { ADMIN_TOKEN, harness } from '../support/harness.ts';
import { cli, cliEnv, cliJson } from './run-cli.ts';
import { freePort } from '../../app/free-port.ts';

// Customer commands through the SDK, against the live Dispatch of the run.

const TO = '+14155550123';

describe('dispatch: send and messages', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  let tenant: Tenant;
  before(async () => {
    tenant = await sendingTenant({ balance: 10 });
  });

  it('send prints the message and exits 0', async () => {
    const result = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hello from the CLI', '--reference', 'order-1'], { apiKey: tenant.key });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.equal('');
    expect(result.stdout)
      .to.match(/^ID\s+msg_\w{24}$/m)
      .and.match(/^Status\s+pending$/m)
      .and.match(new RegExp(`^To\\s+\\${TO}$`, 'm'));
    expect(result.stdout)
      .to.match(/^Reference\s+order-1$/m)
      .and.match(/^Cost\s+0\.01 USD$/m);
  });

  it('send --json prints the message as JSON, status pending; messages get and list find it', async () => {
    const message = await cliJson<Schemas['Message']>(
      ['send', '--to', TO, '--from', 'Dispatch', '--body', 'JSON please', '--idempotency-key', `cli-${Date.now()}`],
      {
        apiKey: tenant.key,
      },
    );
    expect(message).to.include({ object: 'message', to: TO, from: 'Dispatch', body: 'JSON please', status: 'pending', segments: 1, encoding: 'GSM-7' });
    await waitForMessage(tenant, message.id, (m) => m.status === 'delivered');

    const shown = await cli(['messages', 'get', message.id], { apiKey: tenant.key });
    expect(shown.code).to.equal(0);
    expect(shown.stdout)
      .to.match(/^Status\s+delivered$/m)
      .and.match(/^Delivered\s+\d{4}-/m);

    const page = await cliJson<Page<Schemas['Message']>>(['messages', 'list', '--status', 'delivered', '--limit', '100'], { apiKey: tenant.key });
    expect(page.data.map((m) => m.id)).to.include(message.id);
    expect(page.pagination).to.include({ page: 1, limit: 100 });
    const table = await cli(['messages', 'list', '--to', TO], { apiKey: tenant.key });
    expect(table.code).to.equal(0);
    expect(table.stdout)
      .to.include(message.id)
      .and.match(/Page 1 of \d+ \(\d+ messages?\)/);
  });

  it('the same --idempotency-key sends once', async () => {
    const key = `cli-once-${Date.now()}`;
    const first = await cliJson<Schemas['Message']>(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Once', '--idempotency-key', key], {
      apiKey: tenant.key,
    });
    const second = await cliJson<Schemas['Message']>(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Once', '--idempotency-key', key], {
      apiKey: tenant.key,
    });
    expect(second.id).to.equal(first.id);
  });

  it("send --smart-encoding sends curly quotes as GSM-7; --no-smart-encoding sends them as given over the account's setting", async () => {
    const quoted = ['send', '--to', TO, '--from', 'Dispatch', '--body', '“Quoted” – text'];
    const smart = await cli([...quoted, '--smart-encoding'], { apiKey: tenant.key });
    expect(smart.code, smart.stderr).to.equal(0);
    expect(smart.stdout)
      .to.match(/^Body\s+"Quoted" - text$/m)
      .and.match(/^Segments\s+1 \(GSM-7, look-alikes replaced\)$/m);

    const own = await sendingTenant({ balance: 1 });
    expect((await call('PATCH', '/account', { auth: own.key, body: { smart_encoding: true } })).status).to.equal(200);
    expect(await cliJson(quoted, { apiKey: own.key })).to.include({ body: '"Quoted" - text', smart_encoded: true });
    expect(await cliJson([...quoted, '--no-smart-encoding'], { apiKey: own.key })).to.include({
      body: '“Quoted” – text',
      encoding: 'UCS-2',
      smart_encoded: false,
    });
  });

  it('a 400 exits 1 with one error line on stderr naming the param, and nothing on stdout', async () => {
    const result = await cli(['send', '--to', 'nope', '--from', 'Dispatch', '--body', 'Hi'], { apiKey: tenant.key });
    expect(result.code).to.equal(1);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(/^error: .+ \(parameter_invalid, param to, request req_\w{24}\)\n$/);

    const json = await cli(['send', '--to', 'nope', '--from', 'Dispatch', '--body', 'Hi', '--json'], { apiKey: tenant.key });
    expect(json.code).to.equal(1);
    expect(json.stdout).to.equal('');
    expect(JSON.parse(json.stderr).error).to.include({ status: 400, type: 'invalid_request_error', code: 'parameter_invalid', param: 'to' });

    const sender = await cli(['send', '--to', TO, '--from', 'Nobody', '--body', 'Hi'], { apiKey: tenant.key });
    expect(sender.code).to.equal(1);
    expect(sender.stderr).to.include('(sender_not_approved, param from');
  });

  it('a missing message exits 1; a bad key exits 1; no key at all exits 2', async () => {
    const missing = await cli(['messages', 'get', 'msg_000000000000000000000000'], { apiKey: tenant.key });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('resource_not_found');
    const badKey = await cli(['messages', 'list'], { apiKey: 'ds_live_not-a-key' });
    expect(badKey.code).to.equal(1);
    expect(badKey.stderr).to.include('(unauthorized');
    const noKey = await cli(['messages', 'list']);
    expect(noKey.code).to.equal(2);
    expect(noKey.stderr).to.include('no API key');
  });

  it('an unreachable Dispatch exits 3', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const result = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hi', '--url', url], { apiKey: tenant.key });
    expect(result.code).to.equal(3);
    expect(result.stdout).to.equal('');
    expect(result.stderr).to.match(/^error: could not reach Dispatch: .+ \(connection_error\)\n$/);
    const admin = await cli(['routes', 'list', '--url', url, '--json']);
    expect(admin.code).to.equal(3);
    expect(JSON.parse(admin.stderr).error).to.include({ code: 'connection_error', status: 0 });
  });

  describe('send --wait', () => {
    // One route per outcome, chosen with --route-id: the simulator reports delivery, reports
    // the message undelivered, rejects it (failed), or reports nothing within the test (sent).
    let waiting: Tenant & { routeIds: number[] };
    let route: Record<'delivered' | 'undelivered' | 'rejected' | 'silent', number>;
    before(async () => {
      waiting = await sendingTenant({
        balance: 10,
        routes: [
          { config: { outcome: 'delivered', dlr_delay_ms: 20 } },
          { config: { outcome: 'undelivered', dlr_delay_ms: 20 } },
          { config: { outcome: 'rejected' } },
          { config: { outcome: 'delivered', dlr_delay_ms: 3_600_000 } },
        ],
      });
      const [delivered, undelivered, rejected, silent] = waiting.routeIds;
      route = { delivered, undelivered, rejected, silent };
    });
    const send = (routeId: number, ...flags: string[]) =>
      cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Wait for me', '--route-id', String(routeId), '--wait', ...flags], { apiKey: waiting.key });

    it('waits past pending and sent for delivered: prints the delivered message and exits 0', async () => {
      const result = await send(route.delivered);
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout)
        .to.match(/^Status\s+delivered$/m)
        .and.match(/^Delivered\s+\d{4}-/m);
      expect(result.stderr).to.equal('');
    });

    it('exits 5 on undelivered and on failed, printing the final message (--json: the message)', async () => {
      const undelivered = await send(route.undelivered, '--json');
      expect(undelivered.code, undelivered.stderr).to.equal(5);
      expect(JSON.parse(undelivered.stdout)).to.include({ status: 'undelivered', route_id: route.undelivered });
      const failed = await send(route.rejected);
      expect(failed.code, failed.stderr).to.equal(5);
      expect(failed.stdout)
        .to.match(/^Status\s+failed$/m)
        .and.match(/^Error\s+.+\(provider_rejected\)$/m);
    });

    it('exits 6 when --timeout runs out before a final state (the message still sent), and says so on stderr', async () => {
      const result = await send(route.silent, '--timeout', '2');
      expect(result.code, result.stderr).to.equal(6);
      expect(result.stdout).to.match(/^Status\s+(pending|sent)$/m);
      const id = /^ID\s+(msg_\w{24})$/m.exec(result.stdout)?.[1];
      const status = /^Status\s+(\w+)$/m.exec(result.stdout)?.[1];
      expect(result.stderr).to.equal(`warning: ${id} is still ${status} after 2 s: no final state yet (see dispatch messages get ${id})\n`);
    });

    it('--timeout without --wait, or not a positive integer, is a usage error (exit 2) and sends nothing', async () => {
      const before = (await cliJson<Page<Schemas['Message']>>(['messages', 'list'], { apiKey: waiting.key })).pagination.total;
      const alone = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hi', '--timeout', '5'], { apiKey: waiting.key });
      expect(alone.code).to.equal(2);
      expect(alone.stderr).to.include('--timeout applies only with --wait');
      const zero = await send(route.delivered, '--timeout', '0');
      expect(zero.code).to.equal(2);
      expect((await cliJson<Page<Schemas['Message']>>(['messages', 'list'], { apiKey: waiting.key })).pagination.total).to.equal(before);
    });
  });

  describe('send --dry-run, send --at and messages cancel', () => {
    // The service's clock is set to this time in each test: --at times are written against it.
    const NOW = new Date('2031-05-20T12:00:00Z');
    let scheduling: Tenant & { routeIds: number[] };
    before(async () => {
      scheduling = await sendingTenant({ balance: 10 });
    });
    beforeEach(() => harness.clock.set(NOW));
    const stored = async () => (await call('GET', '/messages', { auth: scheduling.key })).body.pagination.total;
    const balance = async () => (await call('GET', '/balance', { auth: scheduling.key })).body.data.balance;

    it('send --dry-run prints the recipient, its encoding, the UCS-2 characters and the totals, sends nothing and exits 0', async () => {
      const before = await stored();
      const result = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', '“Hi” there', '--at', '2031-05-20T14:00:00+01:00', '--dry-run'], {
        apiKey: scheduling.key,
      });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stderr).to.equal('');
      expect(result.stdout)
        .to.match(/To\s*│\s*Encoding\s*│\s*Segments\s*│\s*Route\s*│\s*Cost\s*│\s*Send at\s*│\s*Refusal/)
        .and.match(new RegExp(`\\${TO}\\s*│ UCS-2\\s*│ 1\\s*│ ${scheduling.routeIds[0]}\\s*│ 0\\.01 USD\\s*│ 2031-05-20T13:00:00\\.000Z\\s*│ -`))
        .and.include('UCS-2 characters (70 characters a segment instead of 160): “ (U+201C) at 0, ” (U+201D) at 3')
        .and.include('Dry run, nothing sent: 1 recipient, 1 sendable, 0 refused; cost 0.01 USD.');

      const preview = await cliJson<Schemas['MessagePreview']>(['send', '--to', TO, '--from', 'Dispatch', '--body', '“Hi” there', '--dry-run'], {
        apiKey: scheduling.key,
      });
      expect(preview).to.include({ object: 'message_preview', total: 1, sendable: 1, refused: 0, cost: 0.01, currency: 'USD' });
      expect(preview.recipients[0]).to.include({ to: TO, encoding: 'UCS-2', segments: 1, send_at: null, refusal: null });
      expect(await stored()).to.equal(before);
      expect(await balance()).to.equal(10);
    });

    it('send --dry-run exits 1 when the send would be refused, listing the refusal by code', async () => {
      const before = await stored();
      const result = await cli(['send', '--to', TO, '--from', 'Nobody', '--body', 'Hi', '--dry-run'], { apiKey: scheduling.key });
      expect(result.code, result.stderr).to.equal(1);
      expect(result.stderr).to.equal('');
      expect(result.stdout)
        .to.match(/│ sender_not_approved\s*│/)
        .and.include('Refusals by error code:')
        .and.include('Dry run, nothing sent: 1 recipient, 0 sendable, 1 refused; cost 0 USD.');
      const json = await cliJson<Schemas['MessagePreview']>(['send', '--to', TO, '--from', 'Nobody', '--body', 'Hi', '--dry-run'], {
        apiKey: scheduling.key,
        code: 1,
      });
      expect(json.recipients[0].refusal).to.deep.include({ status: 400 });
      expect(json.recipients[0].refusal!.error).to.include({ code: 'sender_not_approved' });
      expect(await stored()).to.equal(before);
    });

    it('send --at schedules the message (pending, with its send time); messages list --scheduled finds it; messages cancel cancels it', async () => {
      const result = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Later', '--at', '2031-05-20T14:00:00+01:00', '--validity', '600'], {
        apiKey: scheduling.key,
      });
      expect(result.code, result.stderr).to.equal(0);
      const id = /^ID\s+(msg_\w{24})$/m.exec(result.stdout)?.[1];
      expect(result.stdout)
        .to.match(/^Status\s+pending$/m)
        .and.match(/^Send at\s+2031-05-20T13:00:00\.000Z$/m)
        .and.match(/^Validity\s+600 s$/m);
      expect(result.stderr).to.equal(`Scheduled for 2031-05-20T13:00:00.000Z: dispatch messages cancel ${id} cancels it until then.\n`);
      expect(await balance()).to.equal(9.99);

      const scheduled = await cliJson<Page<Schemas['Message']>>(['messages', 'list', '--scheduled'], { apiKey: scheduling.key });
      expect(scheduled.data.map((message: { id: string }) => message.id)).to.deep.equal([id]);
      expect(scheduled.data[0]).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z', validity_period: 600 });
      const window = ['--send-after', '2031-05-20T12:30:00Z', '--send-before', '2031-05-20T13:30:00Z'];
      expect((await cliJson<Page<Schemas['Message']>>(['messages', 'list', ...window], { apiKey: scheduling.key })).data).to.have.length(1);
      expect(
        (await cliJson<Page<Schemas['Message']>>(['messages', 'list', '--send-after', '2031-05-20T13:00:00Z'], { apiKey: scheduling.key })).data,
      ).to.have.length(0);
      const table = await cli(['messages', 'list', '--scheduled'], { apiKey: scheduling.key });
      expect(table.stdout)
        .to.match(/Created\s*│\s*Send at/)
        .and.include('2031-05-20T13:00:00.000Z');

      const canceled = await cli(['messages', 'cancel', id!], { apiKey: scheduling.key });
      expect(canceled.code, canceled.stderr).to.equal(0);
      expect(canceled.stdout)
        .to.match(/^Status\s+failed$/m)
        .and.match(/^Error\s+.+\(canceled\)$/m);
      expect(await balance()).to.equal(10);
      // A repeat answers the canceled message again.
      expect(await cliJson(['messages', 'cancel', id!], { apiKey: scheduling.key })).to.include({ id, status: 'failed' });
      expect((await cliJson<Page<Schemas['Message']>>(['messages', 'list', '--scheduled'], { apiKey: scheduling.key })).data).to.deep.equal([]);
    });

    it('--at without a zone, or not a date-time, is a usage error (exit 2); one too soon is refused by Dispatch (exit 1, param send_at)', async () => {
      const before = await stored();
      for (const at of ['2031-05-20T14:00:00', 'tomorrow']) {
        const result = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hi', '--at', at], { apiKey: scheduling.key });
        expect(result.code, at).to.equal(2);
        expect(result.stderr, at).to.include('Not a date-time with a zone');
      }
      const soon = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hi', '--at', '2031-05-20T12:00:30Z'], { apiKey: scheduling.key });
      expect(soon.code).to.equal(1);
      expect(soon.stderr).to.include('(parameter_invalid, param send_at');
      const both = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'Hi', '--dry-run', '--wait'], { apiKey: scheduling.key });
      expect(both.code).to.equal(2);
      expect(both.stderr).to.include('cannot be used with');
      expect(await stored()).to.equal(before);
    });

    it('messages cancel of a message already handed to an upstream exits 1 (message_not_cancelable); of an unknown one, 1', async () => {
      harness.clock.reset();
      const message = await cliJson<Schemas['Message']>(['send', '--to', TO, '--from', 'Dispatch', '--body', 'At once'], { apiKey: scheduling.key });
      await waitForMessage(scheduling, message.id, (m) => m.status === 'delivered');
      const late = await cli(['messages', 'cancel', message.id], { apiKey: scheduling.key });
      expect(late.code).to.equal(1);
      expect(late.stdout).to.equal('');
      expect(late.stderr).to.include('(message_not_cancelable');
      const missing = await cli(['messages', 'cancel', 'msg_000000000000000000000000'], { apiKey: scheduling.key });
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.include('resource_not_found');
    });
  });

  describe('settings from DATA_DIR/credentials.json', () => {
    let dataDir: string;
    before(() => {
      dataDir = mkdtempSync(join(tmpdir(), 'dispatch-cli-credentials-'));
      writeFileSync(join(dataDir, 'credentials.json'), JSON.stringify({ base_url: harness.baseUrl, api_key: tenant.key, admin_token: ADMIN_TOKEN }), {
        mode: 0o600,
      });
    });
    after(() => rmSync(dataDir, { recursive: true, force: true }));

    it('needs no flag or variable, as right after npm start', async () => {
      const env = cliEnv({ DATA_DIR: dataDir, DISPATCH_URL: undefined, DISPATCH_ADMIN_TOKEN: undefined });
      const sent = await cli(['send', '--to', TO, '--from', 'Dispatch', '--body', 'From the file', '--json'], { env });
      expect(sent.code, sent.stderr).to.equal(0);
      expect(JSON.parse(sent.stdout)).to.include({ status: 'pending' });
      expect((await cli(['routes', 'list'], { env })).code).to.equal(0);
    });

    it('flags and variables win, and the file key is never sent to another URL', async () => {
      const elsewhere = `http://127.0.0.1:${await freePort()}/api/v1`;
      const env = cliEnv({ DATA_DIR: dataDir, DISPATCH_URL: elsewhere, DISPATCH_ADMIN_TOKEN: undefined });
      const result = await cli(['messages', 'list'], { env });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.include(`no API key for ${elsewhere}`);
      const flags = await cli(['messages', 'list', '--url', harness.baseUrl.replace(/\/api\/v1$/, ''), '--api-key', 'ds_live_wrong'], { env });
      expect(flags.code).to.equal(1);
      expect(flags.stderr).to.include('(unauthorized');
    });
  });
});
