import { expect } from 'chai';
import { ledgerSum } from '../../db/ledger.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { call, expectError } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';

const email = () => `owner-${Math.random().toString(36).slice(2)}@example.com`;

describe('POST /admin/accounts', () => {
  it('opens an account, its opening balance recorded as the first ledger entry', async () => {
    const body = { email: email(), name: 'Acme', company_name: 'Acme Ltd', country: 'GB', currency: 'GBP', balance: 25.5, kyc_verified: true };
    const response = await call('POST', '/admin/accounts', { auth: 'admin', body });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.deep.include({ ...body, object: 'account', status: 'active' });
    expect(response.body.data.id).to.match(/^acct_[0-9A-Za-z]{24}$/);
    const ledger = await harness.db('ledger_entries').where({ account_id: response.body.data.id });
    expect(ledger).to.have.length(1);
    expect(ledger[0]).to.include({ kind: 'credit', amount: '25.5000', balance_after: '25.5000' });
  });

  it('defaults to USD, a zero balance and no ledger entry', async () => {
    const response = await call('POST', '/admin/accounts', { auth: 'admin', body: { email: email(), name: 'Plain' } });
    expect(response.body.data).to.include({ currency: 'USD', balance: 0, company_name: null, country: null, kyc_verified: false });
    expect(await harness.db('ledger_entries').where({ account_id: response.body.data.id })).to.have.length(0);
  });

  it('answers 409 for an email already in use, whatever its case', async () => {
    const address = email();
    await call('POST', '/admin/accounts', { auth: 'admin', body: { email: address, name: 'First' } });
    expectError(await call('POST', '/admin/accounts', { auth: 'admin', body: { email: address.toUpperCase(), name: 'Second' } }), 409, 'conflict', 'email');
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a missing email', { name: 'x' }, 'parameter_missing', 'email'],
    ['a malformed email', { email: 'not-an-email', name: 'x' }, 'parameter_invalid', 'email'],
    ['a negative balance', { email: 'a@example.com', name: 'x', balance: -1 }, 'parameter_invalid', 'balance'],
    ['a balance with five decimals', { email: 'b@example.com', name: 'x', balance: 1.00001 }, 'parameter_invalid', 'balance'],
    ['a lower-case currency', { email: 'c@example.com', name: 'x', currency: 'usd' }, 'parameter_invalid', 'currency'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}`, async () => {
      expectError(await call('POST', '/admin/accounts', { auth: 'admin', body }), 400, code, param);
    });
  }

  it('is off, answering 401, when no ADMIN_TOKEN is configured', async function () {
    // It starts a second Dispatch (pg-boss, workers), which may take seconds on a busy machine.
    this.timeout(60_000);
    const instance = await startInstance(harness.database.url, { ADMIN_TOKEN: '' });
    try {
      const response = await call('POST', '/admin/accounts', { auth: 'admin', baseUrl: instance.baseUrl, body: { email: email(), name: 'x' } });
      expectError(response, 401, 'unauthorized');
      expect(response.body.error.message).to.match(/admin API is disabled/);
    } finally {
      await instance.stop();
    }
  });

  it('answers 401 without the admin token, and to a customer key', async () => {
    const tenant = await createTenant();
    expectError(await call('POST', '/admin/accounts', { body: { email: email(), name: 'x' } }), 401, 'unauthorized');
    expectError(await call('POST', '/admin/accounts', { auth: tenant.key, body: { email: email(), name: 'x' } }), 401, 'unauthorized');
  });
});

describe('GET /admin/accounts/{id}', () => {
  it('answers any account', async () => {
    const tenant = await createTenant({ balance: 7 });
    const response = await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ id: tenant.accountId, balance: 7 });
  });

  it('answers 404 for an unknown account', async () => {
    expectError(await call('GET', '/admin/accounts/acct_000000000000000000000000', { auth: 'admin' }), 404, 'resource_not_found');
  });
});

describe('POST /admin/accounts/{id}/credit', () => {
  it('adds to the balance through the ledger, which always sums to the balance', async () => {
    const tenant = await createTenant({ balance: 1 });
    const response = await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 0.1, description: 'Top-up' } });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.include({ object: 'balance', balance: 1.1, currency: 'USD' });
    await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 0.2 } });
    const account = await harness.db('accounts').where({ id: tenant.accountId }).first();
    expect(account.balance).to.equal('1.3000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('1.3000');
  });

  it('keeps the balance exact under concurrent credits', async () => {
    const tenant = await createTenant({ balance: 0 });
    await Promise.all(
      Array.from({ length: 20 }, () => call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 0.0075 } })),
    );
    const balance = await call('GET', '/balance', { auth: tenant.key });
    expect(balance.body.data.balance).to.equal(0.15);
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('0.1500');
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a zero amount', { amount: 0 }, 'parameter_invalid', 'amount'],
    ['a negative amount', { amount: -5 }, 'parameter_invalid', 'amount'],
    ['an amount with five decimals', { amount: 0.00001 }, 'parameter_invalid', 'amount'],
    ['a missing amount', {}, 'parameter_missing', 'amount'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}, and changes nothing`, async () => {
      const tenant = await createTenant({ balance: 2 });
      expectError(await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body }), 400, code, param);
      expect((await harness.db('accounts').where({ id: tenant.accountId }).first()).balance).to.equal('2.0000');
    });
  }

  it('answers 404 for an unknown account', async () => {
    expectError(await call('POST', '/admin/accounts/acct_000000000000000000000000/credit', { auth: 'admin', body: { amount: 1 } }), 404, 'resource_not_found');
  });
});

describe('POST /admin/accounts/{id}/api-keys', () => {
  it('creates a key with every scope when permissions are omitted', async () => {
    const tenant = await createTenant();
    const response = await call('POST', `/admin/accounts/${tenant.accountId}/api-keys`, { auth: 'admin', body: { name: 'Ops' } });
    expect(response.status).to.equal(201);
    expect(response.body.data.permissions).to.have.members([...SCOPES]);
    expect(response.body.data.plain_key).to.match(/^ds_live_/);
  });

  it('creates a key with exactly the scopes asked for', async () => {
    const tenant = await createTenant();
    const response = await call('POST', `/admin/accounts/${tenant.accountId}/api-keys`, { auth: 'admin', body: { name: 'Narrow', permissions: ['dlr:read'] } });
    expect(response.body.data.permissions).to.deep.equal(['dlr:read']);
    expectError(await call('GET', '/account', { auth: response.body.data.plain_key }), 403, 'forbidden');
  });

  it('answers 400 for an invalid body', async () => {
    const tenant = await createTenant();
    expectError(
      await call('POST', `/admin/accounts/${tenant.accountId}/api-keys`, { auth: 'admin', body: { name: 'x', rate_limit: 0 } }),
      400,
      'parameter_invalid',
      'rate_limit',
    );
  });

  it('answers 404 for an unknown account', async () => {
    expectError(
      await call('POST', '/admin/accounts/acct_000000000000000000000000/api-keys', { auth: 'admin', body: { name: 'x' } }),
      404,
      'resource_not_found',
    );
  });
});
