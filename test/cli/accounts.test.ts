import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import type { Page, Schemas } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { cli, cliJson } from './run-cli.ts';

// Operating accounts from the command line, against the live Dispatch of the run.

describe('dispatch accounts list|suspend|close|reactivate and dispatch audit', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('accounts list filters by text and status, readable and as JSON', async () => {
    const tag = randomBase62(10).toLowerCase();
    const first = await cliJson<Schemas['Account']>(['accounts', 'create', '--email', `${tag}-1@example.com`, '--name', `First ${tag}`]);
    const second = await cliJson<Schemas['Account']>(['accounts', 'create', '--email', `${tag}-2@example.com`, '--name', `Second ${tag}`]);
    expect((await cli(['accounts', 'suspend', second.id, '--reason', 'Unpaid'])).code).to.equal(0);

    const human = await cli(['accounts', 'list', '--q', tag.toUpperCase()]);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.include(first.id)
      .and.include(second.id)
      .and.match(/Page 1 of 1 \(2 accounts\)$/m);
    expect(human.stdout.indexOf(second.id)).to.be.below(human.stdout.indexOf(first.id));

    const suspended = await cliJson<Page<Schemas['Account']>>(['accounts', 'list', '--q', tag, '--status', 'suspended']);
    expect(suspended.data.map((account) => account.id)).to.deep.equal([second.id]);
    expect(suspended.pagination).to.include({ total: 1 });

    const none = await cli(['accounts', 'list', '--email', `nobody-${tag}@example.com`]);
    expect(none.stdout).to.equal('No accounts.\n');
  });

  it('accounts suspend, reactivate and close move the account; a closed one cannot be reactivated (409, exit 1)', async () => {
    const tenant = await createTenant();
    const suspended = await cli(['accounts', 'suspend', tenant.accountId, '--reason', 'Chargeback']);
    expect(suspended.code, suspended.stderr).to.equal(0);
    expect(suspended.stdout).to.match(/^Status\s+suspended$/m);
    expect(await cliJson(['accounts', 'reactivate', tenant.accountId, '--reason', 'Resolved'])).to.include({ id: tenant.accountId, status: 'active' });
    expect(await cliJson(['accounts', 'close', tenant.accountId, '--reason', 'Leaving'])).to.include({ status: 'closed' });

    const refused = await cli(['accounts', 'reactivate', tenant.accountId, '--reason', 'Back']);
    expect(refused.code).to.equal(1);
    expect(refused.stdout).to.equal('');
    expect(refused.stderr).to.match(/^error: .+final.+ \(invalid_state_transition, request req_\w+\)\n$/);

    const missingReason = await cli(['accounts', 'suspend', tenant.accountId]);
    expect(missingReason.code).to.equal(2);
    expect(missingReason.stderr).to.match(/--reason/);
  });

  it('audit lists what was done to a target, newest first, readable and as JSON', async () => {
    const tenant = await createTenant();
    expect((await cli(['accounts', 'suspend', tenant.accountId, '--reason', 'Fraud check'])).code).to.equal(0);

    const human = await cli(['audit', '--target', tenant.accountId]);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.include('account.suspend')
      .and.include('Fraud check')
      .and.match(/\(2 entries\)$/m);
    expect(human.stdout.indexOf('account.suspend')).to.be.below(human.stdout.indexOf('account.create'));

    const page = await cliJson<Page<Schemas['AuditLogEntry']>>([
      'audit',
      '--target',
      tenant.accountId,
      '--action',
      'account.suspend',
      '--target-type',
      'account',
    ]);
    expect(page.data).to.have.length(1);
    expect(page.data[0]).to.include({ action: 'account.suspend', target_id: tenant.accountId, reason: 'Fraud check' });
    expect(page.data[0].before).to.include({ status: 'active' });
    expect(page.data[0].after).to.include({ status: 'suspended' });
  });
});
