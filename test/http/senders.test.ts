import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('POST /senders/create', () => {
  it('registers a sender as pending, inferring its type', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Acme', country_code: 'GB' } });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({
      object: 'sender',
      sender_id: 'Acme',
      type: 'alphanumeric',
      country_code: 'GB',
      status: 'pending',
      approved_at: null,
    });
    expect(response.body.data.id).to.match(/^snd_[0-9A-Za-z]{24}$/);
  });

  it('keeps an explicit type', async () => {
    const tenant = await createTenant();
    const response = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: '+447700900123', type: 'long_code' } });
    expect(response.body.data).to.include({ type: 'long_code', country_code: null });
  });

  const invalid: [string, Record<string, unknown>, string, string][] = [
    ['a missing sender_id', { type: 'numeric' }, 'parameter_missing', 'sender_id'],
    ['a sender_id over 16 characters', { sender_id: '12345678901234567' }, 'parameter_invalid', 'sender_id'],
    ['an alphanumeric sender_id over 11 characters', { sender_id: 'ABCDEFGHIJKL' }, 'parameter_invalid', 'sender_id'],
    ['a sender_id that does not fit its type', { sender_id: '12', type: 'short_code' }, 'parameter_invalid', 'sender_id'],
    ['an unknown type', { sender_id: 'Acme', type: 'vanity' }, 'parameter_invalid', 'type'],
    ['a country_code that is not 2 letters', { sender_id: 'Acme', country_code: 'GBR' }, 'parameter_invalid', 'country_code'],
    ['a field the document does not define', { sender_id: 'Acme', status: 'approved' }, 'parameter_unknown', 'status'],
  ];
  for (const [what, body, code, param] of invalid) {
    it(`answers 400 ${code} for ${what}, and stores nothing`, async () => {
      const tenant = await createTenant();
      expectError(await call('POST', '/senders/create', { auth: tenant.key, body }), 400, code, param);
      expect(await harness.db('senders').where({ account_id: tenant.accountId })).to.have.length(0);
    });
  }

  it('answers 400 duplicate_sender when the account already registered the ID', async () => {
    const tenant = await createTenant();
    await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Acme' } });
    expectError(await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Acme' } }), 400, 'duplicate_sender', 'sender_id');
  });

  it('lets two accounts register the same sender ID', async () => {
    const [a, b] = [await createTenant(), await createTenant()];
    expect((await call('POST', '/senders/create', { auth: a.key, body: { sender_id: 'Shared' } })).status).to.equal(201);
    expect((await call('POST', '/senders/create', { auth: b.key, body: { sender_id: 'Shared' } })).status).to.equal(201);
  });
});

describe('GET /senders', () => {
  it('lists newest first with pagination and a status filter', async () => {
    const tenant = await createTenant();
    const ids: string[] = [];
    for (const senderId of ['One', 'Two', 'Three']) {
      ids.push((await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: senderId } })).body.data.id);
    }
    await call('POST', `/admin/senders/${ids[0]}/approve`, { auth: 'admin' });

    const first = await call('GET', '/senders?limit=2', { auth: tenant.key });
    expect(first.status).to.equal(200);
    expect(first.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[2], ids[1]]);
    expect(first.body.pagination).to.deep.equal({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    const second = await call('GET', '/senders?limit=2&page=2', { auth: tenant.key });
    expect(second.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[0]]);
    expect(second.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, pages: 2, has_more: false });
    const beyond = await call('GET', '/senders?page=9', { auth: tenant.key });
    expect(beyond.body.data).to.deep.equal([]);
    expect(beyond.body.pagination.has_more).to.equal(false);

    const approved = await call('GET', '/senders?status=approved', { auth: tenant.key });
    expect(approved.body.data.map((s: { id: string }) => s.id)).to.deep.equal([ids[0]]);
    expect(approved.body.pagination.total).to.equal(1);
  });

  it('breaks ties in created_at by id, newest id first, so pages never overlap', async () => {
    const tenant = await createTenant();
    for (const senderId of ['A1', 'A2', 'A3', 'A4']) await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: senderId } });
    await harness
      .db('senders')
      .where({ account_id: tenant.accountId })
      .update({ created_at: new Date('2026-01-01T00:00:00Z') });
    const pages = [];
    for (const page of [1, 2])
      pages.push(...(await call('GET', `/senders?limit=2&page=${page}`, { auth: tenant.key })).body.data.map((s: { id: string }) => s.id));
    expect(pages).to.deep.equal([...pages].sort().reverse());
    expect(new Set(pages).size).to.equal(4);
  });

  const badQueries: [string, string][] = [
    ['page=0', 'page'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['status=archived', 'status'],
  ];
  for (const [query, param] of badQueries) {
    it(`answers 400 naming ${param} for ?${query}`, async () => {
      const tenant = await createTenant();
      expectError(await call('GET', `/senders?${query}`, { auth: tenant.key }), 400, 'parameter_invalid', param);
    });
  }
});

describe('GET /senders/{id}', () => {
  it('answers the sender', async () => {
    const tenant = await createTenant();
    const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Acme' } });
    const response = await call('GET', `/senders/${created.body.data.id}`, { auth: tenant.key });
    expect(response.status).to.equal(200);
    expect(response.body.data).to.deep.equal(created.body.data);
  });

  it('answers 404 for an unknown id', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/senders/snd_000000000000000000000000', { auth: tenant.key }), 404, 'resource_not_found', 'id');
  });
});

describe('POST /admin/senders/{id}/approve, /reject, /suspend', () => {
  async function pendingSender() {
    const tenant = await createTenant();
    return (await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: 'Review' } })).body.data.id;
  }

  it('approves a pending sender and stamps approved_at', async () => {
    const id = await pendingSender();
    const response = await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' });
    expect(response.status).to.equal(200);
    expect(response.body.data.status).to.equal('approved');
    expect(response.body.data.approved_at).to.be.a('string');
  });

  it('suspends an approved sender and approves it again', async () => {
    const id = await pendingSender();
    await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' });
    expect((await call('POST', `/admin/senders/${id}/suspend`, { auth: 'admin' })).body.data.status).to.equal('suspended');
    expect((await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' })).body.data.status).to.equal('approved');
  });

  it('rejects a pending sender, and a rejected sender cannot be approved', async () => {
    const id = await pendingSender();
    expect((await call('POST', `/admin/senders/${id}/reject`, { auth: 'admin' })).body.data.status).to.equal('rejected');
    expectError(await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' }), 409, 'invalid_state_transition');
    expectError(await call('POST', `/admin/senders/${id}/suspend`, { auth: 'admin' }), 409, 'invalid_state_transition');
  });

  it('answers 200 unchanged when the decision repeats', async () => {
    const id = await pendingSender();
    const first = await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' });
    const again = await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' });
    expect(again.status).to.equal(200);
    expect(again.body.data).to.deep.equal(first.body.data);
  });

  it('cannot reject an approved sender', async () => {
    const id = await pendingSender();
    await call('POST', `/admin/senders/${id}/approve`, { auth: 'admin' });
    expectError(await call('POST', `/admin/senders/${id}/reject`, { auth: 'admin' }), 409, 'invalid_state_transition');
  });

  for (const decision of ['approve', 'reject', 'suspend']) {
    it(`answers 404 when ${decision} names an unknown sender`, async () => {
      expectError(await call('POST', `/admin/senders/snd_000000000000000000000000/${decision}`, { auth: 'admin' }), 404, 'resource_not_found');
    });
  }
});
