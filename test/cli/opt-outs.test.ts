import { expect } from 'chai';
import { call, type Page, type Schemas } from '../support/client.ts';
import { sendingTenant, type Tenant } from '../support/fixtures.ts';
import { cli, cliJson } from './run-cli.ts';

// dispatch opt-outs through the SDK, against the live Dispatch of the run.

describe('dispatch opt-outs', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  let tenant: Tenant;
  before(async () => {
    tenant = await sendingTenant();
  });

  const send = (to: string) => call('POST', '/messages/send', { auth: tenant.key, body: { to, from: 'Dispatch', body: 'Hello' } });

  it('add opts numbers out (the next send is refused), list shows them, remove lets sending resume', async () => {
    const [first, second] = ['+12127000201', '+12127000202'];
    const added = await cli(['opt-outs', 'add', first, second, '--reason', 'Imported from Acme'], { apiKey: tenant.key });
    expect(added.code, added.stderr).to.equal(0);
    expect(added.stdout).to.equal('Opted out 2 numbers (0 already opted out, 0 failed, 2 given).\n');
    const refused = await send(first);
    expect(refused.status).to.equal(400);
    expect(refused.body.error).to.include({ code: 'recipient_opted_out', param: 'to' });

    const table = await cli(['opt-outs', 'list'], { apiKey: tenant.key });
    expect(table.code, table.stderr).to.equal(0);
    expect(table.stdout).to.include(first).and.include(second).and.include('Imported from Acme').and.include('Page 1 of 1 (2 opt-outs)');
    const page = await cliJson<Page<Schemas['OptOut']>>(['opt-outs', 'list', '--number', second], { apiKey: tenant.key });
    expect(page.data).to.have.length(1);
    expect(page.data[0]).to.include({ number: second, object: 'opt_out', source: 'api', reason: 'Imported from Acme', keyword: null });

    const removed = await cli(['opt-outs', 'remove', first], { apiKey: tenant.key });
    expect(removed.code, removed.stderr).to.equal(0);
    expect(removed.stdout).to.equal(`Removed the opt-out of ${first}: messages to it are accepted again.\n`);
    expect((await send(first)).status).to.equal(201);
    expect((await cliJson<Page<Schemas['OptOut']>>(['opt-outs', 'list'], { apiKey: tenant.key })).data.map((optOut) => optOut.number)).to.deep.equal([second]);
  });

  it('add reports each number that failed and exits 4; --json prints the API result', async () => {
    const result = await cliJson<Schemas['OptOutImportResult']>(['opt-outs', 'add', '+12127000203', '+12127000203', 'nope'], { apiKey: tenant.key, code: 4 });
    expect(result).to.include({ object: 'opt_out_import', total: 3, added: 1, unchanged: 1, failed: 1 });
    expect(result.results[2]).to.deep.include({ number: 'nope', status: 'failed' });

    const human = await cli(['opt-outs', 'add', '+12127000203', 'nope'], { apiKey: tenant.key });
    expect(human.code).to.equal(4);
    expect(human.stdout).to.match(/^Opted out 0 numbers \(1 already opted out, 1 failed, 2 given\)\.\n {2}nope: .+ \(number_invalid\)\n$/);
  });

  it('remove of a number that is not opted out exits 1; a bad filter is refused naming it', async () => {
    const missing = await cli(['opt-outs', 'remove', '+12127000299'], { apiKey: tenant.key });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('(resource_not_found');
    const bad = await cli(['opt-outs', 'list', '--number', '0740012345'], { apiKey: tenant.key });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.include('param number');
  });
});
