import { expect } from 'chai';
import { hashSecret } from '../../domain/api-key-secret.ts';
import { newId, randomBase62 } from '../../domain/ids.ts';
import { call, expectError, type Schemas } from '../support/client.ts';
import { createOperator, createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

type Entry = Schemas['AuditLogEntry'];

const uniqueName = (what: string) => `${what} ${randomBase62(10)}`;

async function auditLog(query: Record<string, string>): Promise<Entry[]> {
  const response = await call('GET', `/admin/audit-log?${new URLSearchParams({ limit: '100', ...query }).toString()}`, { auth: 'admin' });
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response.body.data;
}

describe('POST /admin/operators', () => {
  it('creates viewer, support and admin operators, each token shown once and stored only as its hash', async () => {
    for (const role of ['viewer', 'support', 'admin'] as const) {
      const name = uniqueName(role);
      const response = await call('POST', '/admin/operators', { auth: 'admin', body: { name, role } });
      expect(response.status, JSON.stringify(response.body)).to.equal(201);
      const operator = response.body.data;
      expect(operator).to.include({ object: 'operator', name, role, revoked_at: null, last_used_at: null });
      expect(operator.id).to.match(/^opr_[0-9A-Za-z]{24}$/);
      expect(operator.token).to.match(/^op_[0-9A-Za-z]{43}$/);

      const row = await harness.db('operators').where({ id: operator.id }).first();
      expect(row.token_hash.equals(hashSecret(operator.token))).to.equal(true);
      expect(JSON.stringify(row)).to.not.include(operator.token);

      const listed = (await call('GET', '/admin/operators?limit=100', { auth: 'admin' })).body.data.find((item) => item.id === operator.id);
      const { token: _token, ...shown } = operator;
      expect(listed).to.deep.equal(shown);
    }
  });

  it('lets an admin operator create operators, and the audit log names it, never the token or its hash', async () => {
    const admin = await createOperator('admin');
    const response = await call('POST', '/admin/operators', { auth: admin.token, body: { name: uniqueName('made by admin'), role: 'viewer' } });
    expect(response.status).to.equal(201);
    const created = response.body.data;
    const [entry] = await auditLog({ target_id: created.id });
    expect(entry).to.deep.include({
      action: 'operator.create',
      target_type: 'operator',
      before: null,
      operator: { id: admin.id, name: admin.name },
    });
    expect(entry.after).to.deep.equal({ id: created.id, name: created.name, role: 'viewer', revoked_at: null });
    const stored = JSON.stringify(await harness.db('admin_audit_log').where({ target_id: created.id }));
    expect(stored).to.not.include(created.token).and.not.include(hashSecret(created.token).toString('hex'));
  });

  it("answers 409 naming name for a live duplicate, and gives a revoked operator's name again", async () => {
    const first = await createOperator('viewer');
    expectError(await call('POST', '/admin/operators', { auth: 'admin', body: { name: first.name, role: 'admin' } }), 409, 'conflict', 'name');
    expect((await call('POST', `/admin/operators/${first.id}/revoke`, { auth: 'admin' })).status).to.equal(200);
    const again = await call('POST', '/admin/operators', { auth: 'admin', body: { name: first.name, role: 'admin' } });
    expect(again.status).to.equal(201);
    expect(again.body.data.id).to.not.equal(first.id);
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a missing name', { role: 'viewer' }, 'parameter_missing', 'name'],
    ['an empty name', { name: '', role: 'viewer' }, 'parameter_invalid', 'name'],
    ['a name with a trailing space', { name: 'Dana ', role: 'viewer' }, 'parameter_invalid', 'name'],
    ['a name of 101 characters', { name: 'x'.repeat(101), role: 'viewer' }, 'parameter_invalid', 'name'],
    ['the name root', { name: 'Root', role: 'viewer' }, 'parameter_invalid', 'name'],
    ['a missing role', { name: 'Dana' }, 'parameter_missing', 'role'],
    ['an unknown role', { name: 'Dana', role: 'owner' }, 'parameter_invalid', 'role'],
    ['an unknown field', { name: 'Dana', role: 'viewer', token: 'op_x' }, 'parameter_unknown', 'token'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} naming ${param} for ${what}, and creates nothing`, async () => {
      const before = await harness.db('operators').count({ n: '*' }).first();
      expectError(await call('POST', '/admin/operators', { auth: 'admin', body }), 400, code, param);
      expect(await harness.db('operators').count({ n: '*' }).first()).to.deep.equal(before);
    });
  }
});

describe('GET /admin/operators', () => {
  it('lists operators newest first, revoked ones with revoked_at, paged', async () => {
    const older = await createOperator('viewer');
    const newer = await createOperator('support');
    await call('POST', `/admin/operators/${older.id}/revoke`, { auth: 'admin' });
    const response = await call('GET', '/admin/operators?limit=100', { auth: 'admin' });
    expect(response.status).to.equal(200);
    const ids = response.body.data.map((operator) => operator.id);
    expect(ids.indexOf(newer.id)).to.be.below(ids.indexOf(older.id));
    expect(response.body.data.find((operator) => operator.id === older.id)?.revoked_at).to.be.a('string');
    expect(response.body.data.find((operator) => operator.id === newer.id)?.revoked_at).to.equal(null);

    const page = await call('GET', '/admin/operators?limit=1&page=2', { auth: 'admin' });
    expect(page.body.data).to.have.length(1);
    expect(page.body.pagination).to.include({ page: 2, limit: 1, total: response.body.pagination.total });
  });

  it('answers 400 naming limit for a limit of 0', async () => {
    expectError(await call('GET', '/admin/operators?limit=0', { auth: 'admin' }), 400, 'parameter_invalid', 'limit');
  });

  it('records when a token was last used', async () => {
    const operator = await createOperator('viewer');
    expect((await call('GET', '/admin/operators/current', { auth: operator.token })).status).to.equal(200);
    const row = await harness.db('operators').where({ id: operator.id }).first();
    expect(row.last_used_at).to.be.an.instanceOf(Date);
  });
});

describe('POST /admin/operators/{id}/revoke', () => {
  it('revokes the operator: its token answers 401 from the next request on; a repeat answers the same and records nothing more', async () => {
    const operator = await createOperator('admin');
    expect((await call('GET', '/admin/accounts', { auth: operator.token })).status).to.equal(200);
    const revoked = await call('POST', `/admin/operators/${operator.id}/revoke`, { auth: 'admin' });
    expect(revoked.status).to.equal(200);
    expect(revoked.body.data).to.include({ id: operator.id, name: operator.name, role: 'admin' });
    expect(revoked.body.data.revoked_at).to.be.a('string');
    const repeat = await call('POST', `/admin/operators/${operator.id}/revoke`, { auth: 'admin' });
    expect(repeat.status).to.equal(200);
    expect(repeat.body.data).to.deep.equal(revoked.body.data);
    const response = await call('GET', '/admin/accounts', { auth: operator.token });
    expectError(response, 401, 'unauthorized');
    expect((await auditLog({ target_id: operator.id, action: 'operator.revoke' })).map((entry) => entry.operator)).to.deep.equal([{ id: null, name: 'root' }]);
  });

  it('answers 404 for an unknown operator and 400 naming id for a malformed one', async () => {
    expectError(await call('POST', `/admin/operators/opr_${'0'.repeat(24)}/revoke`, { auth: 'admin' }), 404, 'resource_not_found');
    expectError(await call('POST', '/admin/operators/key_000000000000000000000000/revoke', { auth: 'admin' }), 400, 'parameter_invalid', 'id');
  });
});

describe('GET /admin/operators/current', () => {
  it('answers root for ADMIN_TOKEN and the operator for its token', async () => {
    const root = await call('GET', '/admin/operators/current', { auth: 'admin' });
    expect(root.status).to.equal(200);
    expect(root.body.data).to.deep.equal({ object: 'current_operator', id: null, name: 'root', role: 'admin' });
    const operator = await createOperator('viewer');
    const own = await call('GET', '/admin/operators/current', { auth: operator.token });
    expect(own.body.data).to.deep.equal({ object: 'current_operator', id: operator.id, name: operator.name, role: 'viewer' });
  });

  it('answers 400 naming a query parameter it does not take', async () => {
    expectError(await call('GET', '/admin/operators/current?id=root', { auth: 'admin' }), 400, 'parameter_unknown', 'id');
  });
});

describe('POST /admin/accounts/{id}/notes', () => {
  it('records a note as an audit entry about the account, by its operator, and answers it', async () => {
    const tenant = await createTenant();
    const support = await createOperator('support');
    const response = await call('POST', `/admin/accounts/${tenant.accountId}/notes`, { auth: support.token, body: { text: 'Called about invoice 42' } });
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    expect(response.body.data).to.deep.include({
      action: 'account.note',
      target_type: 'account',
      target_id: tenant.accountId,
      before: null,
      after: null,
      reason: 'Called about invoice 42',
      operator: { id: support.id, name: support.name },
    });
    const notes = await auditLog({ account_id: tenant.accountId, action: 'account.note' });
    expect(notes).to.deep.equal([response.body.data]);
  });

  it('answers 404 for an unknown account and records nothing', async () => {
    const id = `acct_${randomBase62(24)}`;
    expectError(await call('POST', `/admin/accounts/${id}/notes`, { auth: 'admin', body: { text: 'Nobody' } }), 404, 'resource_not_found');
    expect(await auditLog({ target_id: id })).to.deep.equal([]);
  });

  for (const [what, text] of [
    ['an empty text', ''],
    ['a text of 2001 characters', 'x'.repeat(2001)],
  ] as const) {
    it(`answers 400 naming text for ${what}`, async () => {
      const tenant = await createTenant();
      expectError(await call('POST', `/admin/accounts/${tenant.accountId}/notes`, { auth: 'admin', body: { text } }), 400, 'parameter_invalid', 'text');
    });
  }
});

describe('roles', () => {
  it('lets a viewer read but not write, naming the role a write requires', async () => {
    const tenant = await createTenant();
    const viewer = await createOperator('viewer');
    expect((await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: viewer.token })).status).to.equal(200);
    expect((await call('GET', '/admin/audit-log', { auth: viewer.token })).status).to.equal(200);
    const writes: [string, object, string][] = [
      [`/admin/accounts/${tenant.accountId}/notes`, { text: 'Hello' }, 'support'],
      [`/admin/accounts/${tenant.accountId}/credit`, { amount: 5 }, 'admin'],
      ['/admin/operators', { name: uniqueName('escalation'), role: 'admin' }, 'admin'],
    ];
    for (const [path, body, role] of writes) {
      const response = await call('POST', path, { auth: viewer.token, body });
      expectError(response, 403, 'forbidden');
      expect(response.body.error.details).to.deep.equal({ required_role: role });
    }
    expect(await auditLog({ operator_id: viewer.id })).to.deep.equal([]);
  });

  it('lets support add a note but not credit; lets admin credit', async () => {
    const tenant = await createTenant({ balance: 10 });
    const support = await createOperator('support');
    const admin = await createOperator('admin');
    expect((await call('POST', `/admin/accounts/${tenant.accountId}/notes`, { auth: support.token, body: { text: 'Asked for credit' } })).status).to.equal(201);
    const refused = await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: support.token, body: { amount: 5 } });
    expectError(refused, 403, 'forbidden');
    expect(refused.body.error.details).to.deep.equal({ required_role: 'admin' });
    const credited = await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: admin.token, body: { amount: 5 } });
    expect(credited.status).to.equal(200);
    expect(credited.body.data.balance).to.equal(15);
  });

  it('answers 401 before 403: a revoked token is unauthenticated even where its role would be refused', async () => {
    const viewer = await createOperator('viewer');
    await call('POST', `/admin/operators/${viewer.id}/revoke`, { auth: 'admin' });
    expectError(await call('POST', '/admin/operators', { auth: viewer.token, body: { name: 'x', role: 'viewer' } }), 401, 'unauthorized');
  });
});

describe('the audit log names the operator', () => {
  it('names the operator of each write, root for ADMIN_TOKEN, and filters by operator_id and account_id', async () => {
    const tenant = await createTenant();
    const admin = await createOperator('admin');
    const other = await createTenant();
    expect((await call('POST', `/admin/accounts/${tenant.accountId}/suspend`, { auth: admin.token, body: { reason: 'Unpaid' } })).status).to.equal(200);
    expect((await call('POST', `/admin/accounts/${other.accountId}/credit`, { auth: admin.token, body: { amount: 1 } })).status).to.equal(200);

    const history = await auditLog({ account_id: tenant.accountId });
    expect(history.map((entry) => [entry.action, entry.operator])).to.deep.equal([
      ['account.suspend', { id: admin.id, name: admin.name }],
      ['account.create', { id: null, name: 'root' }],
    ]);

    const byAdmin = await auditLog({ operator_id: admin.id });
    expect(byAdmin.map((entry) => [entry.action, entry.target_id])).to.deep.equal([
      ['account.credit', other.accountId],
      ['account.suspend', tenant.accountId],
    ]);
    const byRoot = await auditLog({ operator_id: 'root', account_id: tenant.accountId });
    expect(byRoot.map((entry) => entry.action)).to.deep.equal(['account.create']);
  });

  it('answers 400 naming operator_id for a value that is neither an operator id nor root', async () => {
    expectError(await call('GET', '/admin/audit-log?operator_id=admin', { auth: 'admin' }), 400, 'parameter_invalid', 'operator_id');
  });

  it('reads root for an entry written without an operator, as every entry from before operators was', async () => {
    const targetId = `acct_${randomBase62(24)}`;
    await harness.db('admin_audit_log').insert({ id: newId('aud'), action: 'account.credit', target_type: 'account', target_id: targetId });
    expect((await auditLog({ target_id: targetId })).map((entry) => entry.operator)).to.deep.equal([{ id: null, name: 'root' }]);
  });
});
