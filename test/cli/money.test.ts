import { expect } from 'chai';
import type { Page, Schemas } from '../support/client.ts';
import { eventually, sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { cli, cliJson } from './run-cli.ts';

describe('dispatch balance, transactions, usage and stats', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(90_000);
  let tenant: Tenant & { routeIds: number[] };
  let sent: { id: string };

  before(async () => {
    tenant = await sendingTenant({ balance: 5, routes: [{ price: 0.25, config: { outcome: 'delivered', dlr_delay_ms: 10 } }] });
    sent = await cliJson(['send', '--to', '+12127000042', '--from', 'Dispatch', '--body', 'Hi'], { apiKey: tenant.key });
    await waitForMessage(tenant, sent.id, (message) => message.status === 'delivered');
  });

  it('balance shows the balance after the send', async () => {
    expect(await cliJson(['balance'], { apiKey: tenant.key })).to.include({ object: 'balance', balance: 4.75, currency: 'USD' });
    const human = await cli(['balance'], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(/^Balance\s+4\.75 USD$/m);
  });

  it('transactions lists the ledger, filtered by type and message', async () => {
    const all = await cliJson<Page<Schemas['BalanceTransaction']>>(['transactions'], { apiKey: tenant.key });
    expect(all.data.map((row) => [row.type, row.amount])).to.deep.equal([
      ['debit', -0.25],
      ['credit', 5],
    ]);
    expect(all.pagination.total).to.equal(2);
    const debits = await cliJson<Page<Schemas['BalanceTransaction']>>(['transactions', '--type', 'debit', '--message-id', sent.id], { apiKey: tenant.key });
    expect(debits.data.map((row) => row.message_id)).to.deep.equal([sent.id]);
    const human = await cli(['transactions', '--limit', '1'], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.include('-0.25 USD').and.include('Page 1 of 2 (2 transactions): --page 2 for more');
    expect((await cli(['transactions', '--type', 'bonus'], { apiKey: tenant.key })).code).to.equal(2);
  });

  it('usage counts the period asked for', async () => {
    const usage = await cliJson(['usage', '--period', 'all'], { apiKey: tenant.key });
    expect(usage).to.deep.include({ period: 'all', totals: { messages: 1, cost: 0.25 } });
    const human = await cli(['usage'], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.match(/^Period\s+month /m)
      .and.match(/^ {2}delivered\s+1$/m);
    expect((await cli(['usage', '--period', 'week'], { apiKey: tenant.key })).code).to.equal(2);
  });

  it('stats reports the counters, grouped as asked, and exits 1 when Dispatch refuses the grouping', async () => {
    // The counters are written with the delivery, which the API has already shown.
    const stats = await eventually(
      () => cliJson<Schemas['Stats']>(['stats', '--group-by', 'route,country'], { apiKey: tenant.key }),
      (answer) => answer.totals.by_status.delivered === 1,
    );
    expect(stats.totals).to.deep.include({ messages: 1, delivery_rate: 1, cost: 0.25 });
    expect(stats.groups.map((group) => [group.route_id, group.country, group.messages])).to.deep.equal([[tenant.routeIds[0], 'US', 1]]);
    const human = await cli(['stats', '--interval', 'day'], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.match(/^Delivery rate\s+100\.0%$/m)
      .and.include('Period');
    const refused = await cli(['stats', '--group-by', 'sender'], { apiKey: tenant.key });
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('group_by');
  });
});
