import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createTenant, storeMessages, type Tenant } from '../support/fixtures.ts';

describe('tenant isolation', () => {
  let owner: Tenant;
  let stranger: Tenant;
  let senderId: string;
  let keyId: string;
  let messageId: string;

  before(async () => {
    owner = await createTenant();
    stranger = await createTenant();
    senderId = (await call('POST', '/senders/create', { auth: owner.key, body: { sender_id: 'Private' } })).body.data.id;
    keyId = (await call('POST', '/api-keys/create', { auth: owner.key, body: { name: 'Private' } })).body.data.id;
    [messageId] = await storeMessages(owner, [{ from: 'Private' }]);
  });

  it("answers another account's sender with 404, exactly like a missing one", async () => {
    const foreign = await call('GET', `/senders/${senderId}`, { auth: stranger.key });
    const missing = await call('GET', '/senders/snd_000000000000000000000000', { auth: stranger.key });
    expectError(foreign, 404, 'resource_not_found');
    expect(foreign.body.error.message.replace(senderId, 'ID')).to.equal(missing.body.error.message.replace('snd_000000000000000000000000', 'ID'));
  });

  it("answers another account's message with 404", async () => {
    expectError(await call('GET', `/messages/${messageId}`, { auth: stranger.key }), 404, 'resource_not_found');
    expect((await call('GET', `/messages/${messageId}`, { auth: owner.key })).status).to.equal(200);
  });

  it("cannot revoke another account's key", async () => {
    expectError(await call('DELETE', `/api-keys/${keyId}`, { auth: stranger.key }), 404, 'resource_not_found');
    const listed = await call('GET', '/api-keys', { auth: owner.key });
    expect(listed.body.data.data.find((k) => k.id === keyId)!.is_active).to.equal(true);
  });

  it("lists only the caller's own resources", async () => {
    expect((await call('GET', '/senders', { auth: stranger.key })).body.data).to.deep.equal([]);
    expect((await call('GET', '/messages', { auth: stranger.key })).body.data).to.deep.equal([]);
    const keys = (await call('GET', '/api-keys', { auth: stranger.key })).body.data.data.map((k: { id: string }) => k.id);
    expect(keys).to.deep.equal([stranger.keyId]);
    expect((await call('GET', '/usage?period=all', { auth: stranger.key })).body.data.totals.messages).to.equal(0);
  });

  it('answers each account its own account and balance', async () => {
    expect((await call('GET', '/account', { auth: stranger.key })).body.data.id).to.equal(stranger.accountId);
    expect((await call('GET', '/account', { auth: owner.key })).body.data.id).to.equal(owner.accountId);
  });
});
