import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import type { Page, Schemas } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { cli, cliEnv, cliJson } from './run-cli.ts';

// Operators through the CLI: created with ADMIN_TOKEN, then used in its place through --admin-token.

describe('dispatch: operators', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('operators create shows the token once; the token works as --admin-token within its role; revoke ends it', async () => {
    const name = `CLI support ${randomBase62(6)}`;
    const created = await cliJson<Schemas['OperatorWithToken']>(['operators', 'create', '--name', name, '--role', 'support']);
    expect(created).to.include({ name, role: 'support', revoked_at: null });
    expect(created.token).to.match(/^op_[0-9A-Za-z]{43}$/);

    const current = await cli(['operators', 'current', '--admin-token', created.token]);
    expect(current.code, current.stderr).to.equal(0);
    expect(current.stdout)
      .to.match(new RegExp(`^Name\\s+${name}$`, 'm'))
      .and.match(/^Role\s+support$/m);
    expect((await cli(['operators', 'current'])).stdout).to.match(/^Name\s+root$/m);

    const tenant = await createTenant();
    const env = cliEnv({ DISPATCH_ADMIN_TOKEN: created.token });
    const note = await cli(['accounts', 'note', tenant.accountId, 'Called about invoice 42'], { env });
    expect(note.code, note.stderr).to.equal(0);
    expect(note.stdout).to.match(new RegExp(`^By\\s+${name}$`, 'm'));
    const credit = await cli(['accounts', 'credit', tenant.accountId, '5'], { env });
    expect(credit.code).to.equal(1);
    expect(credit.stderr).to.include('(forbidden');

    const audit = await cliJson<Page<Schemas['AuditLogEntry']>>(['audit', '--operator', created.id, '--account', tenant.accountId]);
    expect(audit.data.map((entry) => [entry.action, entry.reason, entry.operator])).to.deep.equal([
      ['account.note', 'Called about invoice 42', { id: created.id, name }],
    ]);
    const table = await cli(['audit', '--account', tenant.accountId]);
    expect(table.stdout).to.include(name).and.include('root');

    const list = await cli(['operators', 'list', '--limit', '100']);
    expect(list.code).to.equal(0);
    expect(list.stdout).to.include(created.id).and.not.include(created.token);

    const revoked = await cliJson<Schemas['Operator']>(['operators', 'revoke', created.id]);
    expect(revoked.revoked_at).to.be.a('string');
    const after = await cli(['operators', 'current', '--admin-token', created.token]);
    expect(after.code).to.equal(1);
    expect(after.stderr).to.include('(unauthorized');
  });

  it('operators create refuses an unknown role as a usage error (exit 2)', async () => {
    const result = await cli(['operators', 'create', '--name', 'Nobody', '--role', 'owner']);
    expect(result.code).to.equal(2);
    expect(result.stderr).to.include('owner');
  });
});
