import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { readRecipients, sendBulk, type BulkSummary } from '../../cli/bulk.ts';
import { UsageError } from '../../cli/output.ts';
import type { Message } from '../../sdk/index.ts';
import { InvalidRequestError } from '../../sdk/errors.ts';
import { call } from '../support/client.ts';
import { sendingTenant } from '../support/fixtures.ts';
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
