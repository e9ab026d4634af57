import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call, expectError } from '../support/client.ts';
import { addRoute, createAdminKey, createTenant, eventually, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const UNKNOWN_ACCOUNT = 'acct_000000000000000000000000';

async function requestSender(tenant: Tenant, senderId: string): Promise<string> {
  const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: senderId } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body.data.id;
}

const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((item) => item.id);

describe('GET /admin/senders', () => {
  it('lists the senders of every account with their account, matching sender_id ignoring case, newest first', async () => {
    const text = `Ship${randomBase62(6)}`;
    const [first, second] = [await createTenant(), await createTenant()];
    const older = await requestSender(first, text);
    const newer = await requestSender(second, text.toUpperCase());
    await requestSender(second, `Other${randomBase62(6)}`);

    const found = await call('GET', `/admin/senders?sender_id=${text.toLowerCase()}`, { auth: 'admin' });
    expect(found.status).to.equal(200);
    expect(ids(found)).to.deep.equal([newer, older]);
    expect(found.body.data.map((sender: { account_id: string }) => sender.account_id)).to.deep.equal([second.accountId, first.accountId]);
    expect(found.body.pagination).to.include({ total: 2, page: 1 });

    const oneAccount = await call('GET', `/admin/senders?sender_id=${text}&account_id=${first.accountId}`, { auth: 'admin' });
    expect(ids(oneAccount)).to.deep.equal([older]);
  });

  it('filters by status, and an unknown account lists nothing', async () => {
    const tenant = await createTenant();
    const pending = await requestSender(tenant, `Pend${randomBase62(6)}`);
    const approved = await requestSender(tenant, `Appr${randomBase62(6)}`);
    expect((await call('POST', `/admin/senders/${approved}/approve`, { auth: 'admin' })).status).to.equal(200);

    const listed = await call('GET', `/admin/senders?account_id=${tenant.accountId}&status=pending`, { auth: 'admin' });
    expect(ids(listed)).to.deep.equal([pending]);
    expect(listed.body.data[0]).to.include({ status: 'pending', object: 'sender' });
    const none = await call('GET', `/admin/senders?account_id=${UNKNOWN_ACCOUNT}`, { auth: 'admin' });
    expect(none.body.data).to.deep.equal([]);
    expect(none.body.pagination).to.include({ total: 0 });
  });

  it('pages with page and limit, the total exact', async () => {
    const tenant = await createTenant();
    const made = [];
    for (let i = 0; i < 3; i += 1) made.push(await requestSender(tenant, `Page${i}${randomBase62(6)}`));
    const second = await call('GET', `/admin/senders?account_id=${tenant.accountId}&limit=2&page=2`, { auth: 'admin' });
    expect(ids(second)).to.deep.equal([made[0]]);
    expect(second.body.pagination).to.deep.equal({ page: 2, limit: 2, total: 3, pages: 2, has_more: false });
  });

  it('answers 400 naming the parameter for a status it does not know and for an empty sender_id', async () => {
    expectError(await call('GET', '/admin/senders?status=waiting', { auth: 'admin' }), 400, 'parameter_invalid', 'status');
    expectError(await call('GET', '/admin/senders?sender_id=', { auth: 'admin' }), 400, 'parameter_invalid', 'sender_id');
  });

  it('answers 401 without the admin token', async () => {
    const tenant = await createTenant();
    expectError(await call('GET', '/admin/senders', { auth: tenant.key }), 401, 'unauthorized');
  });
});

describe('GET /admin/accounts/{id}/routes', () => {
  it('lists the routes assigned to the account in failover order, with their priority, inactive ones included', async () => {
    const tenant = await createTenant();
    const later = await addRoute(tenant.accountId, 7);
    const first = await addRoute(tenant.accountId, 2, { provider: 'http', config: { url: 'http://127.0.0.1:9/sms', token: 'never-shown' } });
    expect((await call('PATCH', `/admin/routes/${later}`, { auth: 'admin', body: { is_active: false } })).status).to.equal(200);

    const listed = await call('GET', `/admin/accounts/${tenant.accountId}/routes`, { auth: 'admin' });
    expect(listed.status).to.equal(200);
    expect(listed.body.data.object).to.equal('list');
    expect(
      listed.body.data.data.map((route: { id: number; priority: number; is_active: boolean }) => [route.id, route.priority, route.is_active]),
    ).to.deep.equal([
      [first, 2, true],
      [later, 7, false],
    ]);
    expect(JSON.stringify(listed.body)).to.not.include('never-shown');

    const empty = await call('GET', `/admin/accounts/${(await createTenant()).accountId}/routes`, { auth: 'admin' });
    expect(empty.body.data.data).to.deep.equal([]);
  });

  it('answers 404 for an unknown account and 400 for a malformed id', async () => {
    expectError(await call('GET', `/admin/accounts/${UNKNOWN_ACCOUNT}/routes`, { auth: 'admin' }), 404, 'resource_not_found', 'id');
    expectError(await call('GET', '/admin/accounts/acct_%00/routes', { auth: 'admin' }), 400, 'parameter_invalid', 'id');
  });
});

describe('GET /admin/accounts/{id}/api-keys', () => {
  it('lists every key of the account, newest first, revoked ones inactive, never a secret', async () => {
    const tenant = await createTenant();
    const second = await createAdminKey(tenant.accountId, { name: 'Reporting', permissions: ['sms:read'] });
    expect((await call('DELETE', `/api-keys/${second.id}`, { auth: tenant.key })).status).to.equal(200);

    const listed = await call('GET', `/admin/accounts/${tenant.accountId}/api-keys`, { auth: 'admin' });
    expect(listed.status).to.equal(200);
    expect(listed.body.data.data.map((key: { id: string; is_active: boolean }) => [key.id, key.is_active])).to.deep.equal([
      [second.id, false],
      [tenant.keyId, true],
    ]);
    expect(JSON.stringify(listed.body)).to.not.include(second.plain_key).and.not.include(tenant.key);
  });

  it('answers 404 for an unknown account and 400 for a malformed id', async () => {
    expectError(await call('GET', `/admin/accounts/${UNKNOWN_ACCOUNT}/api-keys`, { auth: 'admin' }), 404, 'resource_not_found', 'id');
    expectError(await call('GET', '/admin/accounts/acct_%00/api-keys', { auth: 'admin' }), 400, 'parameter_invalid', 'id');
  });
});

describe('GET /admin/accounts/{id}/ledger', () => {
  it('lists the balance changes newest first, in the account currency, adding up to the balance', async () => {
    const tenant = await createTenant({ balance: 5, currency: 'EUR' });
    expect((await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 2.5, description: 'INV-7' } })).status).to.equal(
      200,
    );

    const listed = await call('GET', `/admin/accounts/${tenant.accountId}/ledger`, { auth: 'admin' });
    expect(listed.status).to.equal(200);
    expect(
      listed.body.data.map(({ type, amount, balance_after, currency, description, message_id }: Record<string, unknown>) => ({
        type,
        amount,
        balance_after,
        currency,
        description,
        message_id,
      })),
    ).to.deep.equal([
      { type: 'credit', amount: 2.5, balance_after: 7.5, currency: 'EUR', description: 'INV-7', message_id: null },
      { type: 'credit', amount: 5, balance_after: 5, currency: 'EUR', description: listed.body.data[1].description, message_id: null },
    ]);
    expect(listed.body.data[0].id).to.match(/^txn_\d+$/);
    expect(listed.body.pagination).to.include({ total: 2 });
    const account = await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' });
    expect(account.body.data.balance).to.equal(7.5);

    const paged = await call('GET', `/admin/accounts/${tenant.accountId}/ledger?limit=1&page=2`, { auth: 'admin' });
    expect(paged.body.data.map((row: { id: string }) => row.id)).to.deep.equal([listed.body.data[1].id]);
  });

  it('answers 404 for an unknown account and 400 for a bad page', async () => {
    expectError(await call('GET', `/admin/accounts/${UNKNOWN_ACCOUNT}/ledger`, { auth: 'admin' }), 404, 'resource_not_found', 'id');
    const tenant = await createTenant();
    expectError(await call('GET', `/admin/accounts/${tenant.accountId}/ledger?page=0`, { auth: 'admin' }), 400, 'parameter_invalid', 'page');
  });
});

describe('GET /admin/blocklist', () => {
  it('lists every entry newest first, global and per account, and narrows to one number', async () => {
    const tenant = await createTenant();
    const number = `+4420${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`;
    const mine = await call('POST', '/admin/blocklist', { auth: 'admin', body: { number, account_id: tenant.accountId, reason: 'STOP' } });
    const global = await call('POST', '/admin/blocklist', { auth: 'admin', body: { number } });

    const listed = await call('GET', `/admin/blocklist?number=${encodeURIComponent(number)}`, { auth: 'admin' });
    expect(listed.status).to.equal(200);
    expect(listed.body.data).to.deep.equal([global.body.data, mine.body.data]);
    expect(listed.body.pagination).to.include({ total: 2 });

    const all = await call('GET', '/admin/blocklist?limit=100', { auth: 'admin' });
    expect(ids(all)).to.include(global.body.data.id);
  });

  it('answers 400 naming number for a number that is not E.164', async () => {
    expectError(await call('GET', '/admin/blocklist?number=07400123456', { auth: 'admin' }), 400, 'parameter_invalid', 'number');
  });
});

describe('GET /admin/messages', () => {
  it('lists messages across accounts with their account, by account, route, error code and the customer filters', async () => {
    const [first, second] = [await createTenant(), await createTenant()];
    const route = await addRoute(first.accountId, 0);
    const code = `code_${randomBase62(8)}`;
    const [failed] = await storeMessages(first, [
      { status: 'failed', route_id: route, error: { type: 'provider_error', code, message: 'No.' }, created_at: '2026-01-01T10:00:00Z' },
    ]);
    const [sent] = await storeMessages(first, [{ status: 'sent', route_id: route, created_at: '2026-01-01T11:00:00Z' }]);
    const [other] = await storeMessages(second, [
      { status: 'failed', error: { type: 'provider_error', code, message: 'No.' }, created_at: '2026-01-01T12:00:00Z' },
    ]);

    const byCode = await call('GET', `/admin/messages?error_code=${code}`, { auth: 'admin' });
    expect(byCode.status).to.equal(200);
    expect(ids(byCode)).to.deep.equal([other, failed]);
    expect(byCode.body.data.map((message: { account_id: string }) => message.account_id)).to.deep.equal([second.accountId, first.accountId]);
    expect(byCode.body.pagination).to.include({ total: 2 });

    expect(ids(await call('GET', `/admin/messages?route_id=${route}`, { auth: 'admin' }))).to.deep.equal([sent, failed]);
    expect(ids(await call('GET', `/admin/messages?route_id=${route}&status=sent`, { auth: 'admin' }))).to.deep.equal([sent]);
    expect(ids(await call('GET', `/admin/messages?account_id=${first.accountId}`, { auth: 'admin' }))).to.deep.equal([sent, failed]);
    expect(ids(await call('GET', `/admin/messages?account_id=${first.accountId}&status=failed`, { auth: 'admin' }))).to.deep.equal([failed]);
    const range = await call('GET', `/admin/messages?error_code=${code}&created_before=2026-01-01T11:30:00Z`, { auth: 'admin' });
    expect(ids(range)).to.deep.equal([failed]);
    expect(range.body.pagination).to.include({ total: 1 });
    expect((await call('GET', `/admin/messages?account_id=${UNKNOWN_ACCOUNT}`, { auth: 'admin' })).body.pagination).to.include({ total: 0 });
  });

  it('finds a message by the id its upstream gave it, or one of its parts, on any route', async () => {
    const [first, second] = [await createTenant(), await createTenant()];
    const [one, other] = [await addRoute(first.accountId, 0), await addRoute(second.accountId, 0)];
    const upstreamId = `up-${randomBase62(10)}`;
    const [onOne, long] = await storeMessages(first, [
      { route_id: one, created_at: '2026-01-01T10:00:00Z' },
      { route_id: one, segments: 2, created_at: '2026-01-01T11:00:00Z' },
    ]);
    // Each upstream numbers its own messages: another route may use the same id for another message.
    const [onOther] = await storeMessages(second, [{ route_id: other, created_at: '2026-01-01T12:00:00Z' }]);
    await harness.db('messages').where({ id: onOne }).update({ provider_message_id: upstreamId });
    await harness.db('messages').where({ id: onOther }).update({ provider_message_id: upstreamId });
    await harness
      .db('messages')
      .where({ id: long })
      .update({ provider_message_id: `${upstreamId}-1` });
    await harness
      .db('message_parts')
      .insert([1, 2].map((part) => ({ route_id: one, provider_message_id: `${upstreamId}-${part}`, message_id: long, part_number: part })));

    const found = await call('GET', `/admin/messages?provider_message_id=${upstreamId}`, { auth: 'admin' });
    expect(found.status).to.equal(200);
    expect(ids(found)).to.deep.equal([onOther, onOne]);
    expect(found.body.data.map((message: { provider_message_id: string | null }) => message.provider_message_id)).to.deep.equal([upstreamId, upstreamId]);
    expect(found.body.pagination).to.include({ total: 2 });
    expect(ids(await call('GET', `/admin/messages?provider_message_id=${upstreamId}-2`, { auth: 'admin' }))).to.deep.equal([long]);
    const mine = await call('GET', `/admin/messages?provider_message_id=${upstreamId}&account_id=${first.accountId}`, { auth: 'admin' });
    expect(ids(mine)).to.deep.equal([onOne]);
    expect(mine.body.pagination).to.include({ total: 1 });
    const none = await call('GET', `/admin/messages?provider_message_id=${upstreamId}-3`, { auth: 'admin' });
    expect(none.body.data).to.deep.equal([]);
    expect(none.body.pagination).to.include({ total: 0 });
  });

  it("counts every account's messages exactly without filters or by status alone", async () => {
    const tenant = await createTenant();
    await storeMessages(tenant, [{ status: 'failed' }, { status: 'delivered' }]);
    const count = async (status?: string) =>
      Number(
        (
          await harness
            .db('messages')
            .modify((query) => {
              if (status) query.where({ status });
            })
            .count({ n: '*' })
        )[0].n,
      );
    // Other tests' messages may move meanwhile: the answer counts when the table held still around it.
    for (const status of [undefined, 'failed']) {
      await eventually(
        async () => {
          const before = await count(status);
          const listed = await call('GET', `/admin/messages?limit=1${status ? `&status=${status}` : ''}`, { auth: 'admin' });
          return { before, total: listed.body.pagination.total, after: await count(status) };
        },
        ({ before, total, after }) => before === after && total === before,
        { what: `the total of ${status ?? 'every'} message` },
      );
    }
  });

  it('answers 400 naming the parameter for a route id that is not a number and a status it does not know', async () => {
    expectError(await call('GET', '/admin/messages?route_id=abc', { auth: 'admin' }), 400, 'parameter_invalid', 'route_id');
    expectError(await call('GET', '/admin/messages?status=lost', { auth: 'admin' }), 400, 'parameter_invalid', 'status');
    expectError(await call('GET', '/admin/messages?provider_message_id=', { auth: 'admin' }), 400, 'parameter_invalid', 'provider_message_id');
  });
});
