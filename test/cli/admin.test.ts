import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call, type Page, type Schemas } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { cli, cliEnv, cliJson } from './run-cli.ts';

// The admin commands against the live Dispatch of the run, through DISPATCH_URL and DISPATCH_ADMIN_TOKEN.

const email = () => `cli-${randomBase62(10).toLowerCase()}@example.com`;

describe('dispatch: admin commands', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('accounts create, then accounts get, readable and as JSON', async () => {
    const address = email();
    const created = await cli([
      'accounts',
      'create',
      '--email',
      address,
      '--name',
      'Acme Logistics',
      '--company-name',
      'Acme Ltd',
      '--country',
      'GB',
      '--currency',
      'EUR',
      '--balance',
      '25.5',
    ]);
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.equal('');
    const id = /^ID\s+(acct_\w+)$/m.exec(created.stdout)?.[1];
    expect(id, created.stdout).to.be.a('string');
    expect(created.stdout)
      .to.match(/^Email\s+cli-/m)
      .and.match(/^Balance\s+25\.5 EUR$/m)
      .and.match(/^Company\s+Acme Ltd$/m);

    const human = await cli(['accounts', 'get', id!]);
    expect(human.code).to.equal(0);
    expect(human.stdout)
      .to.match(new RegExp(`^Email\\s+${address}$`, 'm'))
      .and.match(/^Status\s+active$/m);

    const account = await cliJson(['accounts', 'get', id!]);
    expect(account).to.include({
      id,
      object: 'account',
      email: address,
      name: 'Acme Logistics',
      company_name: 'Acme Ltd',
      country: 'GB',
      currency: 'EUR',
      balance: 25.5,
      status: 'active',
    });
  });

  it('accounts create --json prints only the account on stdout', async () => {
    const result = await cli(['accounts', 'create', '--email', email(), '--name', 'Json', '--json']);
    expect(result.code).to.equal(0);
    expect(result.stderr).to.equal('');
    expect(JSON.parse(result.stdout)).to.include({ object: 'account', balance: 0, currency: 'USD' });
  });

  it('accounts credit adds to the balance', async () => {
    const tenant = await createTenant({ balance: 10 });
    const human = await cli(['accounts', 'credit', tenant.accountId, '2.5', '--description', 'INV-1']);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(/^Balance\s+12\.5 USD$/m);
    const balance = await cliJson(['accounts', 'credit', tenant.accountId, '0.0001']);
    expect(balance).to.include({ object: 'balance', balance: 12.5001, currency: 'USD' });
  });

  it('a refusal exits 1 with the error line on stderr: unknown account (404), duplicate email (409), bad amount (400)', async () => {
    const missing = await cli(['accounts', 'get', 'acct_000000000000000000000000']);
    expect(missing.code).to.equal(1);
    expect(missing.stdout).to.equal('');
    expect(missing.stderr).to.match(/^error: .+ \(resource_not_found, param id, request req_\w+\)\n$/);

    const address = email();
    expect((await cli(['accounts', 'create', '--email', address, '--name', 'One'])).code).to.equal(0);
    const duplicate = await cli(['accounts', 'create', '--email', address.toUpperCase(), '--name', 'Two', '--json']);
    expect(duplicate.code).to.equal(1);
    expect(duplicate.stdout).to.equal('');
    expect(JSON.parse(duplicate.stderr).error).to.include({ status: 409, code: 'conflict' });

    const tenant = await createTenant();
    const negative = await cli(['accounts', 'credit', tenant.accountId, '--', '-5']);
    expect(negative.code).to.equal(1);
    expect(negative.stderr).to.match(/\(parameter_invalid, param amount, request req_\w+\)/);
  });

  it('keys create prints the full key once, and the key works', async () => {
    const tenant = await createTenant();
    const human = await cli(['keys', 'create', tenant.accountId, '--name', 'Reporting', '--permissions', 'sms:read,balance:read', '--rate-limit', '120']);
    expect(human.code, human.stderr).to.equal(0);
    const plain = /^Key\s+(ds_live_\w+)$/m.exec(human.stdout)?.[1];
    expect(plain).to.match(/^ds_live_\w{49}$/);
    expect(human.stdout)
      .to.match(/^Permissions\s+sms:read, balance:read$/m)
      .and.match(/^Rate limit\s+120\/min$/m);
    expect(human.stderr).to.include('shown only once');
    expect((await call('GET', '/balance', { auth: plain })).status).to.equal(200);

    const key = await cliJson<Schemas['ApiKeyWithSecret']>(['keys', 'create', tenant.accountId, '--name', 'Everything', '--daily-limit', '100']);
    expect(key).to.include({ object: 'api_key', name: 'Everything', daily_limit: 100 });
    expect(key.permissions).to.include('webhooks:write');
  });

  it('routes create, list, get, update, assign and unassign', async () => {
    const tenant = await createTenant();
    const name = `cli-route-${randomBase62(8)}`;
    const route = await cliJson<Schemas['Route']>([
      'routes',
      'create',
      '--name',
      name,
      '--provider',
      'simulator',
      '--config',
      '{"outcome":"delivered","dlr_delay_ms":10}',
      '--price',
      '0.02',
      '--prefixes',
      '+44,+33',
      '--inactive',
    ]);
    expect(route).to.include({ object: 'route', name, provider: 'simulator', price_per_segment: 0.02, is_active: false });
    expect(route.prefixes).to.deep.equal(['+44', '+33']);
    expect(route).not.to.have.property('config');

    const list = await cliJson<Schemas['RouteList']>(['routes', 'list']);
    expect(list.object).to.equal('list');
    expect(list.data.map((item) => item.id)).to.include(route.id);
    const table = await cli(['routes', 'list']);
    expect(table.stdout).to.include(name).and.include('+44, +33');

    const shown = await cli(['routes', 'get', String(route.id)]);
    expect(shown.stdout)
      .to.match(new RegExp(`^Name\\s+${name}$`, 'm'))
      .and.match(/^Active\s+false$/m);

    const updated = await cliJson<Schemas['Route']>(['routes', 'update', String(route.id), '--price', '0.03', '--prefixes', '', '--active']);
    expect(updated).to.include({ id: route.id, price_per_segment: 0.03, is_active: true });
    expect(updated.prefixes).to.deep.equal([]);

    const assigned = await cli(['routes', 'assign', tenant.accountId, String(route.id), '--priority', '5']);
    expect(assigned.code, assigned.stderr).to.equal(0);
    expect(assigned.stdout).to.match(/^Priority\s+5$/m);
    const reassigned = await cliJson(['routes', 'assign', tenant.accountId, String(route.id), '--priority', '7']);
    expect(reassigned).to.include({ object: 'route_assignment', account_id: tenant.accountId, route_id: route.id, priority: 7 });

    const removed = await cliJson(['routes', 'unassign', tenant.accountId, String(route.id)]);
    expect(removed).to.include({ deleted: true });
    const again = await cli(['routes', 'unassign', tenant.accountId, String(route.id)]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.include('resource_not_found');
  });

  it('senders create (customer), then senders approve, suspend and reject (admin)', async () => {
    const tenant = await createTenant();
    const created = await cliJson<Schemas['Sender']>(['senders', 'create', 'CliShip'], { apiKey: tenant.key });
    expect(created).to.include({ object: 'sender', sender_id: 'CliShip', status: 'pending' });

    const approved = await cli(['senders', 'approve', created.id]);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout).to.match(/^Status\s+approved$/m);
    expect(await cliJson(['senders', 'suspend', created.id])).to.include({ status: 'suspended' });

    const refused = await cli(['senders', 'reject', created.id]);
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('invalid_state_transition');

    const listed = await cliJson<Page<Schemas['Sender']>>(['senders', 'list', '--status', 'suspended'], { apiKey: tenant.key });
    expect(listed.data.map((sender) => sender.id)).to.deep.equal([created.id]);
    expect(listed.pagination).to.include({ total: 1 });
  });

  it('blocklist add and remove, for one account and for every account', async () => {
    const tenant = await createTenant();
    const number = `+4420${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const entry = await cliJson<Schemas['BlocklistEntry']>(['blocklist', 'add', number, '--account', tenant.accountId, '--reason', 'STOP']);
    expect(entry).to.include({ object: 'blocklist_entry', number, account_id: tenant.accountId, reason: 'STOP' });
    const global = await cli(['blocklist', 'add', number]);
    expect(global.code, global.stderr).to.equal(0);
    expect(global.stdout).to.match(/^Account\s+every account$/m);
    const duplicate = await cli(['blocklist', 'add', number]);
    expect(duplicate.code).to.equal(1);
    expect(duplicate.stderr).to.include('conflict');

    const removed = await cliJson(['blocklist', 'remove', number, '--account', tenant.accountId]);
    expect(removed).to.include({ id: entry.id, deleted: true });
    const removedGlobal = await cli(['blocklist', 'remove', number]);
    expect(removedGlobal.code).to.equal(0);
    expect(removedGlobal.stdout).to.include(`Unblocked ${number} for every account`);
    expect((await cli(['blocklist', 'remove', number])).code).to.equal(1);
  });

  it('a wrong admin token exits 1; no admin token at all is a usage error (exit 2)', async () => {
    const wrong = await cli(['routes', 'list', '--admin-token', 'not-the-token']);
    expect(wrong.code).to.equal(1);
    expect(wrong.stderr).to.include('(unauthorized');
    const none = await cli(['routes', 'list'], { env: cliEnv({ DISPATCH_ADMIN_TOKEN: undefined }) });
    expect(none.code).to.equal(2);
    expect(none.stderr).to.match(/^error: no admin token for .+ pass --admin-token or set DISPATCH_ADMIN_TOKEN\n$/);
  });

  describe('against a failing server', () => {
    let server: Server;
    let url: string;
    before(async () => {
      server = createServer((_req, res) => {
        res.writeHead(503, { 'content-type': 'application/json', 'x-request-id': 'req_000000000000000000000000' });
        res.end(JSON.stringify({ success: false, error: { type: 'api_error', code: 'internal_error', message: 'Down for maintenance.' } }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('a 5xx exits 3', async () => {
      const result = await cli(['accounts', 'get', 'acct_x', '--url', url]);
      expect(result.code).to.equal(3);
      expect(result.stderr).to.equal('error: Down for maintenance. (internal_error, request req_000000000000000000000000)\n');
    });
  });
});
