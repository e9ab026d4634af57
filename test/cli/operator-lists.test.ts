import { expect } from 'chai';
import { randomBase62 } from '../../domain/ids.ts';
import { call, type Page, type Schemas } from '../support/client.ts';
import { createAdminKey, createTenant, sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { cli, cliEnv, cliJson } from './run-cli.ts';

// The operator's lists and lookups through `dispatch`, against the live Dispatch of the run.

async function requestSender(tenant: Tenant, senderId: string): Promise<string> {
  const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: senderId } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return created.body.data.id;
}

describe('dispatch: operator lists', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  it('a newcomer approves a sender knowing only its text', async () => {
    const tenant = await createTenant();
    const text = `Acme${randomBase62(6)}`;
    const id = await requestSender(tenant, text);

    const pending = await cli(['senders', 'list', '--all-accounts', '--status', 'pending', '--sender-id', text.toLowerCase()]);
    expect(pending.code, pending.stderr).to.equal(0);
    expect(pending.stdout).to.include(id).and.include(tenant.accountId);

    const approved = await cli(['senders', 'approve', text]);
    expect(approved.code, approved.stderr).to.equal(0);
    expect(approved.stdout)
      .to.match(new RegExp(`^ID\\s+${id}$`, 'm'))
      .and.match(/^Status\s+approved$/m);
    expect((await call('GET', `/senders/${id}`, { auth: tenant.key })).body.data.status).to.equal('approved');
  });

  it('refuses a text that several accounts share, listing them, until --account or the snd_ id settles it', async () => {
    const text = `Twin${randomBase62(6)}`;
    const [first, second] = [await createTenant(), await createTenant()];
    const firstId = await requestSender(first, text);
    const secondId = await requestSender(second, text);

    const ambiguous = await cli(['senders', 'suspend', text]);
    expect(ambiguous.code).to.equal(2);
    expect(ambiguous.stdout).to.equal('');
    expect(ambiguous.stderr).to.include(firstId).and.include(first.accountId).and.include(secondId).and.include(second.accountId).and.include('--account');

    const rejected = await cliJson(['senders', 'reject', text, '--account', second.accountId]);
    expect(rejected).to.include({ id: secondId, status: 'rejected' });
    expect(await cliJson(['senders', 'approve', firstId])).to.include({ id: firstId, status: 'approved' });

    const unknown = await cli(['senders', 'approve', `Nobody${randomBase62(6)}`]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.match(/^error: No sender "Nobody\w+"\.\n$/);

    const listed = await cliJson<Page<Schemas['AdminSender']>>(['senders', 'list', '--sender-id', text]);
    expect(listed.data.map((sender) => [sender.id, sender.account_id, sender.status])).to.deep.equal([
      [secondId, second.accountId, 'rejected'],
      [firstId, first.accountId, 'approved'],
    ]);
    expect(listed.pagination).to.include({ total: 2 });
    const mine = await cliJson<Page<Schemas['Sender']>>(['senders', 'list'], { apiKey: first.key });
    expect(mine.data.map((sender) => sender.id)).to.deep.equal([firstId]);
  });

  it("keys list shows your keys with an API key and any account's with --account, never in full; keys revoke stops one", async () => {
    const tenant = await createTenant();
    const spare = await createAdminKey(tenant.accountId, { name: 'Spare', permissions: ['sms:read'] });

    const revoked = await cli(['keys', 'revoke', spare.id], { apiKey: tenant.key });
    expect(revoked.code, revoked.stderr).to.equal(0);
    expect(revoked.stdout).to.equal(`Revoked ${spare.id}.\n`);
    expect((await call('GET', '/messages', { auth: spare.plain_key })).status).to.equal(401);

    const asAdmin = await cliJson<Schemas['ApiKeyList']>(['keys', 'list', '--account', tenant.accountId]);
    expect(asAdmin.data.map((key) => [key.id, key.is_active])).to.deep.equal([
      [spare.id, false],
      [tenant.keyId, true],
    ]);
    const asCustomer = await cli(['keys', 'list'], { apiKey: tenant.key });
    expect(asCustomer.code, asCustomer.stderr).to.equal(0);
    expect(asCustomer.stdout).to.include(spare.id).and.include('Spare').and.not.include(tenant.key);

    const missing = await cli(['keys', 'list', '--account', 'acct_000000000000000000000000']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('resource_not_found');
  });

  it("messages story tells a message's statuses, attempts, events and charges in order", async () => {
    const tenant = await sendingTenant();
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Hello' } });
    await waitForMessage(tenant, sent.body.data.id, (message) => message.status === 'delivered');

    const story = await cliJson<Schemas['MessageStory']>(['messages', 'story', sent.body.data.id]);
    expect(story.message).to.include({ id: sent.body.data.id, account_id: tenant.accountId, status: 'delivered' });
    const kinds = story.entries.map((entry: { kind: string; status?: string }) => entry.status ?? entry.kind);
    expect(kinds).to.deep.equal(['pending', 'ledger', 'attempt', 'sent', 'event', 'delivered', 'event']);

    const human = await cli(['messages', 'story', sent.body.data.id]);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout)
      .to.match(new RegExp(`^Account\\s+${tenant.accountId}$`, 'm'))
      .and.include('#1 to route')
      .and.include('debit -0.01 USD');

    const unknown = await cli(['messages', 'story', 'msg_000000000000000000000000']);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('resource_not_found');
  });

  it("messages search finds any account's message by the upstream's id or by number, and tells its account", async () => {
    const tenant = await sendingTenant();
    const to = `+1415555${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`;
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to, from: 'Dispatch', body: 'Hello' } });
    const delivered = await waitForMessage(tenant, sent.body.data.id, (message) => message.status === 'delivered');
    const upstreamId = delivered.provider_message_id as string;

    const byUpstream = await cliJson<Page<Schemas['AdminMessage']>>(['messages', 'search', '--provider-id', upstreamId]);
    expect(byUpstream.data.map((message) => [message.id, message.account_id])).to.deep.equal([[sent.body.data.id, tenant.accountId]]);

    const human = await cli(['messages', 'search', '--to', to, '--account', tenant.accountId]);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.include(sent.body.data.id).and.include(tenant.accountId).and.include(upstreamId).and.include('Page 1 of 1 (1 message)\n');

    const none = await cli(['messages', 'search', '--provider-id', `${upstreamId}-none`]);
    expect(none.stdout).to.equal('No messages.\n');
  });

  it("messages story with only an API key tells the key's own message through the customer API, and no other account's", async () => {
    const [owner, stranger] = [await sendingTenant(), await createTenant()];
    const sent = await call('POST', '/messages/send', { auth: owner.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Hello' } });
    await waitForMessage(owner, sent.body.data.id, (message) => message.status === 'delivered');
    const asCustomer = (key: string) => ({ env: cliEnv({ DISPATCH_API_KEY: key, DISPATCH_ADMIN_TOKEN: undefined }) });

    const own = await cli(['messages', 'story', sent.body.data.id, '--json'], asCustomer(owner.key));
    expect(own.code, own.stderr).to.equal(0);
    const story = JSON.parse(own.stdout) as Schemas['MessageStory'];
    expect(story.message).to.include({ id: sent.body.data.id, account_id: owner.accountId });
    expect(story).to.deep.equal(await cliJson<Schemas['MessageStory']>(['messages', 'story', sent.body.data.id]));

    const foreign = await cli(['messages', 'story', sent.body.data.id], asCustomer(stranger.key));
    expect(foreign.code).to.equal(1);
    expect(foreign.stderr).to.include('resource_not_found');
  });

  it('keys current shows the API key in use, whatever its scopes', async () => {
    const tenant = await createTenant();
    const reader = await createAdminKey(tenant.accountId, { name: 'Read only', permissions: ['sms:read'] });
    const current = await cliJson<Schemas['ApiKey']>(['keys', 'current'], { apiKey: reader.plain_key });
    expect(current).to.include({ id: reader.id, name: 'Read only' });
    expect(current.permissions).to.deep.equal(['sms:read']);
  });
});
