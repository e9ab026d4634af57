import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { previewBulk, readRecipients, sendBulk, type BulkPreview, type BulkSummary } from '../../cli/bulk.ts';
import { UsageError } from '../../cli/output.ts';
import type { BulkCancel, Message, RecipientPreview } from '../../sdk/index.ts';
import { InvalidRequestError } from '../../sdk/errors.ts';
import { call } from '../support/client.ts';
import { sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { cli, cliJson } from './run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'dispatch-cli-bulk-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function csvFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

/** 2,500 rows: every 500th from row 8 a number that cannot exist, rows 1000 and 2000 not E.164. */
function recipientsCsv(): { text: string; impossible: number; malformed: number } {
  const lines = ['name,phone'];
  let impossible = 0;
  let malformed = 0;
  for (let row = 1; row <= 2500; row++) {
    let to = `+1415555${String(row).padStart(4, '0')}`;
    if (row % 500 === 8) {
      to = '+10005550100';
      impossible++;
    }
    if (row === 1000 || row === 2000) {
      to = row === 1000 ? 'nope' : '07700 900123';
      malformed++;
    }
    lines.push(`Customer ${row},${to}`);
  }
  return { text: `${lines.join('\n')}\n`, impossible, malformed };
}

describe('dispatch bulk', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('sends 2,500 rows in 3 requests; some recipients fail: exit 4 with the right summary', async () => {
    const tenant = await sendingTenant({ balance: 100 });
    const { text, impossible, malformed } = recipientsCsv();
    const file = csvFile('customers.csv', text);
    const summary = await cliJson<BulkSummary>(
      ['bulk', '--csv', file, '--column', 'phone', '--from', 'Dispatch', '--body', 'Depot closed Monday', '--reference', 'depot'],
      { apiKey: tenant.key, code: 4 },
    );

    const accepted = 2500 - impossible - malformed;
    expect(summary).to.include({
      object: 'bulk_summary',
      total: 2500,
      accepted,
      failed: impossible + malformed,
      requests: 3,
      currency: 'USD',
      cost: accepted / 100,
    });
    expect(summary.failures).to.deep.equal({ number_invalid: impossible, parameter_invalid: malformed });
    expect(summary.items).to.have.length(2500);
    expect(summary.items[0]).to.include({ row: 1, to: '+14155550001', status: 'pending', error: null });
    expect(summary.items[7]).to.include({ row: 8, to: '+10005550100', status: 'failed' });
    expect(summary.items[7].error).to.include({ code: 'number_invalid' });
    expect(summary.items[999]).to.include({ row: 1000, to: 'nope', id: null, status: 'not_sent' });

    const balance = await call('GET', '/balance', { auth: tenant.key });
    expect(balance.body.data.balance).to.equal(Number((100 - accepted / 100).toFixed(4)));
  });

  it('prints a readable summary table, and exits 0 when every recipient was accepted', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const file = csvFile('small.csv', 'to\n+14155550101\n+14155550102\n\n+10005550100\n');
    const partial = await cli(['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Hi'], { apiKey: tenant.key });
    expect(partial.code, partial.stderr).to.equal(4);
    expect(partial.stdout)
      .to.match(/Total\s*│\s*Accepted\s*│\s*Failed\s*│\s*Cost/)
      .and.match(/│ 3\s+│ 2\s+│ 1\s+│ 0\.02 USD/);
    expect(partial.stdout).to.include('number_invalid').and.include('row 3 (+10005550100)');
    expect(partial.stderr).to.equal('');

    const good = csvFile('good.csv', 'to\n+14155550103\n');
    const ok = await cli(['bulk', '--csv', good, '--from', 'Dispatch', '--body', 'Hi'], { apiKey: tenant.key });
    expect(ok.code, ok.stderr).to.equal(0);
    expect(ok.stdout).not.to.include('Failures');
  });

  it('--smart-encoding replaces the look-alikes for every recipient', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const file = csvFile('smart.csv', 'to\n+14155550121\n+14155550122\n');
    const summary = await cliJson<BulkSummary>(
      ['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Depot closed – see you “Tuesday”', '--smart-encoding'],
      {
        apiKey: tenant.key,
      },
    );
    expect(summary).to.include({ accepted: 2, cost: 0.02 });
    for (const { id } of summary.items) {
      const message = (await call('GET', `/messages/${id}`, { auth: tenant.key })).body.data;
      expect(message).to.include({ body: 'Depot closed - see you "Tuesday"', encoding: 'GSM-7', smart_encoded: true });
    }
  });

  it('--idempotency-key makes a rerun of the same file send nothing twice; reads stdin with --csv -', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const text = 'to\n+14155550111\n+14155550112\n';
    const key = `bulk-${Date.now()}`;
    const first = await cliJson<BulkSummary>(['bulk', '--csv', csvFile('twice.csv', text), '--from', 'Dispatch', '--body', 'Once', '--idempotency-key', key], {
      apiKey: tenant.key,
    });
    const second = await cli(['bulk', '--csv', '-', '--from', 'Dispatch', '--body', 'Once', '--idempotency-key', key, '--json'], {
      apiKey: tenant.key,
      input: text,
    });
    expect(second.code, second.stderr).to.equal(0);
    expect(JSON.parse(second.stdout).items.map((item: { id: string }) => item.id)).to.deep.equal(first.items.map((item) => item.id));
    expect((await call('GET', '/balance', { auth: tenant.key })).body.data.balance).to.equal(9.98);
  });

  it('a request refused whole stops the run: exit 1, the summary still printed', async () => {
    const tenant = await sendingTenant({ balance: 10 });
    const file = csvFile('refused.csv', 'to\n+14155550121\n+14155550122\n');
    const result = await cli(['bulk', '--csv', file, '--from', 'NotMine', '--body', 'Hi', '--json'], { apiKey: tenant.key });
    expect(result.code).to.equal(1);
    const summary = JSON.parse(result.stdout) as BulkSummary;
    expect(summary).to.include({ total: 2, accepted: 0, failed: 2 });
    expect(summary.failures).to.deep.equal({ sender_not_approved: 2 });
    expect(JSON.parse(result.stderr).error).to.include({ code: 'sender_not_approved' });
  });

  describe('--at, --dry-run and bulk cancel', () => {
    // The service's clock is set to this time in each test: --at times are written against it.
    beforeEach(() => harness.clock.set(new Date('2031-05-20T12:00:00Z')));
    const stored = async (key: string) => (await call('GET', '/messages', { auth: key })).body.pagination.total;
    const balance = async (key: string) => (await call('GET', '/balance', { auth: key })).body.data.balance;

    it('--dry-run previews every row, sends nothing, and exits 4 when some row would be refused', async () => {
      const tenant = await sendingTenant({ balance: 10 });
      const file = csvFile('preview.csv', 'to\n+14155550131\n+10005550100\nnope\n+14155550132\n');
      const args = ['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Depot closed Monday', '--at', '2031-05-20T14:00:00Z', '--dry-run'];
      const preview = await cliJson<BulkPreview>(args, { apiKey: tenant.key, code: 4 });
      expect(preview).to.include({ object: 'bulk_preview', total: 4, sendable: 2, refused: 2, cost: 0.02, currency: 'USD', requests: 1 });
      expect(preview.recipients.map((item) => [item.row, item.refusal?.error.code ?? null])).to.deep.equal([
        [1, null],
        [2, 'number_invalid'],
        [3, 'parameter_invalid'],
        [4, null],
      ]);
      expect(preview.recipients[0]).to.include({ to: '+14155550131', encoding: 'GSM-7', segments: 1, cost: 0.01, send_at: '2031-05-20T14:00:00.000Z' });

      const human = await cli(args, { apiKey: tenant.key });
      expect(human.code, human.stderr).to.equal(4);
      expect(human.stderr).to.equal('');
      expect(human.stdout)
        .to.match(/Row\s*│\s*To\s*│\s*Encoding\s*│\s*Segments\s*│\s*Route\s*│\s*Cost\s*│\s*Send at\s*│\s*Refusal/)
        .and.match(/│ 3\s+│ nope\s+│ -\s+│ -\s+│ -\s+│ -\s+│ -\s+│ parameter_invalid │/)
        .and.include('row 2 (+10005550100)')
        .and.include('Dry run, nothing sent: 4 recipients in 1 request, 2 sendable, 2 refused; cost 0.02 USD.');
      expect(human.stdout).not.to.include('UCS-2 characters');

      const fine = await cli(['bulk', '--csv', csvFile('fine.csv', 'to\n+14155550133\n'), '--from', 'Dispatch', '--body', 'Hi', '--dry-run'], {
        apiKey: tenant.key,
      });
      expect(fine.code, fine.stderr).to.equal(0);
      expect(await stored(tenant.key)).to.equal(0);
      expect(await balance(tenant.key)).to.equal(10);
    });

    it('--at schedules every row; bulk cancel cancels the bulk, refunds it, and answers the same counts again', async () => {
      const tenant = await sendingTenant({ balance: 10 });
      const file = csvFile('later.csv', 'to\n+14155550141\n+14155550142\n+14155550143\n');
      const summary = await cliJson<BulkSummary>(
        ['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Later', '--at', '2031-05-20T13:00:00Z', '--validity', '3600'],
        {
          apiKey: tenant.key,
        },
      );
      expect(summary).to.include({ accepted: 3, failed: 0, cost: 0.03 });
      expect(summary.bulk_ids).to.have.length(1);
      const [bulkId] = summary.bulk_ids;
      expect(bulkId).to.match(/^bulk_/);
      const scheduled = (await call('GET', '/messages?scheduled=true', { auth: tenant.key })).body.data;
      expect(scheduled).to.have.length(3);
      for (const message of scheduled)
        expect(message).to.include({ status: 'pending', send_at: '2031-05-20T13:00:00.000Z', validity_period: 3600, bulk_id: bulkId });
      expect(await balance(tenant.key)).to.equal(9.97);

      const canceled = await cli(['bulk', 'cancel', bulkId], { apiKey: tenant.key });
      expect(canceled.code, canceled.stderr).to.equal(0);
      expect(canceled.stdout)
        .to.match(new RegExp(`^Bulk\\s+${bulkId}$`, 'm'))
        .and.match(/^Canceled\s+3$/m)
        .and.match(/^Not cancelable\s+0$/m);
      expect(await balance(tenant.key)).to.equal(10);
      expect((await call('GET', '/messages?scheduled=true', { auth: tenant.key })).body.data).to.deep.equal([]);
      expect(await cliJson<BulkCancel>(['bulk', 'cancel', bulkId], { apiKey: tenant.key })).to.deep.equal({
        object: 'bulk_cancel',
        bulk_id: bulkId,
        canceled: 3,
        not_cancelable: 0,
      });

      const human = await cli(['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Later again', '--at', '2031-05-20T13:00:00Z'], { apiKey: tenant.key });
      expect(human.code, human.stderr).to.equal(0);
      expect(human.stdout).to.match(/^Bulk id: bulk_\w+$/m);
      expect(human.stderr).to.equal('Scheduled for 2031-05-20T13:00:00Z: dispatch bulk cancel <bulk-id> cancels it until then.\n');
    });

    it('bulk cancel of an unknown bulk exits 1; --dry-run with --idempotency-key is a usage error (exit 2)', async () => {
      const tenant = await sendingTenant({ balance: 10 });
      const unknown = await cli(['bulk', 'cancel', 'bulk_000000000000000000000000', '--json'], { apiKey: tenant.key });
      expect(unknown.code).to.equal(1);
      expect(JSON.parse(unknown.stderr).error).to.include({ status: 404, code: 'resource_not_found' });
      const file = csvFile('both.csv', 'to\n+14155550151\n');
      const both = await cli(['bulk', '--csv', file, '--from', 'Dispatch', '--body', 'Hi', '--dry-run', '--idempotency-key', 'k'], { apiKey: tenant.key });
      expect(both.code).to.equal(2);
      expect(both.stderr).to.include('cannot be used with');
      expect(await stored(tenant.key)).to.equal(0);
    });
  });

  it('usage errors: a missing file, a missing column (exit 2)', async () => {
    const missing = await cli(['bulk', '--csv', join(dir, 'nope.csv'), '--from', 'Dispatch', '--body', 'Hi'], { apiKey: 'ds_live_x' });
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.match(/^error: cannot read .*nope\.csv/);
    const column = await cli(['bulk', '--csv', csvFile('cols.csv', 'name,number\nA,+14155550101\n'), '--from', 'Dispatch', '--body', 'Hi'], {
      apiKey: 'ds_live_x',
    });
    expect(column.code).to.equal(2);
    expect(column.stderr).to.include('no column "to" (header: name, number)');
  });
});

describe('cli/bulk.ts', () => {
  const message = (to: string, index: number, failed = false): Message => ({
    id: `msg_${String(index).padStart(24, '0')}`,
    object: 'message',
    to,
    from: 'X',
    body: 'b',
    status: failed ? 'failed' : 'pending',
    cost: failed ? 0 : 0.0075,
    currency: 'USD',
    route_id: null,
    provider_message_id: null,
    attempts: 0,
    error: failed ? { type: 'invalid_request_error', code: 'recipient_blocklisted', message: 'Blocked.' } : null,
    reference: null,
    segments: 1,
    encoding: 'GSM-7',
    created_at: new Date().toISOString(),
    sent_at: null,
    delivered_at: null,
    failed_at: null,
  });

  it('reads the named column, case-insensitively, with a BOM and quoted cells', () => {
    const recipients = readRecipients('\uFEFFName,"TO"\n"Smith, J",+441\n\nB, +442 \n', 'to');
    expect(recipients).to.deep.equal([
      { row: 1, to: '+441' },
      { row: 2, to: '+442' },
    ]);
    expect(() => readRecipients('', 'to')).to.throw(UsageError);
  });

  it('chunks by 1,000, sums the cost exactly, and counts failures by code', async () => {
    const sizes: number[] = [];
    const recipients = Array.from({ length: 2001 }, (_, i) => ({ row: i + 1, to: `+1415555${String(i).padStart(4, '0')}` }));
    const progress: number[] = [];
    const { summary, stoppedBy } = await sendBulk(
      recipients,
      (to, index) => {
        sizes.push(to.length);
        return Promise.resolve({
          object: 'bulk_result',
          total: to.length,
          sent: 0,
          failed: 0,
          messages: to.map((number, i) => message(number, index * 1000 + i, i === 0)),
        });
      },
      (done) => progress.push(done),
    );
    expect(stoppedBy).to.equal(null);
    expect(sizes).to.deep.equal([1000, 1000, 1]);
    expect(progress).to.deep.equal([0, 1000, 2000, 2001]);
    expect(summary).to.include({ total: 2001, accepted: 1998, failed: 3, cost: 14.985, requests: 3 });
    expect(summary.failures).to.deep.equal({ recipient_blocklisted: 3 });
  });

  it('records the bulk id of each request', async () => {
    const recipients = Array.from({ length: 1001 }, (_, i) => ({ row: i + 1, to: '+14155550100' }));
    const { summary } = await sendBulk(recipients, (to, index) =>
      Promise.resolve({
        object: 'bulk_result',
        bulk_id: `bulk_${index}`,
        total: to.length,
        sent: to.length,
        failed: 0,
        messages: to.map((number, i) => message(number, i)),
      }),
    );
    expect(summary.bulk_ids).to.deep.equal(['bulk_0', 'bulk_1']);
  });

  it('previews by 1,000 in file order, refuses rows that are not E.164 itself, and sums the cost of the sendable ones exactly', async () => {
    const recipients = Array.from({ length: 1501 }, (_, i) => ({ row: i + 1, to: i === 2 ? 'nope' : `+1415555${String(i).padStart(4, '0')}` }));
    const sizes: number[] = [];
    const recipient = (to: string, refused: boolean): RecipientPreview => ({
      to,
      body: 'b',
      smart_encoded: false,
      encoding: 'GSM-7',
      segments: 1,
      ucs2_characters: [],
      route_id: 1,
      price_per_segment: 0.0075,
      cost: 0.0075,
      send_at: null,
      refusal: refused ? { status: 400, error: { type: 'invalid_request_error', code: 'recipient_opted_out', message: 'Opted out.' } } : null,
    });
    const preview = await previewBulk(recipients, 'b', (to) => {
      sizes.push(to.length);
      return Promise.resolve({
        object: 'message_preview',
        total: to.length,
        sendable: 0,
        refused: 0,
        cost: 0,
        currency: 'USD',
        recipients: to.map((number, i) => recipient(number, i === 0)),
      });
    });
    expect(sizes).to.deep.equal([1000, 500]);
    expect(preview).to.include({ object: 'bulk_preview', total: 1501, sendable: 1498, refused: 3, cost: 11.235, currency: 'USD', requests: 2 });
    expect(preview.recipients.map((item) => item.row)).to.deep.equal(recipients.map((item) => item.row));
    expect(preview.recipients[2]).to.include({ row: 3, to: 'nope', encoding: null, cost: null });
    expect(preview.recipients[2].refusal?.error).to.include({ code: 'parameter_invalid' });
  });

  it('stops at a request refused whole; its rows and later ones are not sent', async () => {
    const recipients = Array.from({ length: 2500 }, (_, i) => ({ row: i + 1, to: '+14155550100' }));
    let calls = 0;
    const refusal = new InvalidRequestError({ status: 400, type: 'invalid_request_error', code: 'route_invalid', message: 'No route.', requestId: null });
    const { summary, stoppedBy } = await sendBulk(recipients, (to, index) => {
      calls++;
      if (index === 1) return Promise.reject(refusal);
      return Promise.resolve({ object: 'bulk_result', total: to.length, sent: to.length, failed: 0, messages: to.map((number, i) => message(number, i)) });
    });
    expect(calls).to.equal(2);
    expect(stoppedBy).to.equal(refusal);
    expect(summary).to.include({ accepted: 1000, failed: 1500, requests: 2 });
    expect(summary.failures).to.deep.equal({ route_invalid: 1500 });
    expect(summary.items[2499]).to.include({ status: 'not_sent', id: null });
  });
});
