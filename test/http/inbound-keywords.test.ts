import { expect } from 'chai';
import { DEFAULT_REPLIES } from '../../domain/keywords.ts';
import { call, expectError } from '../support/client.ts';
import { eventually } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset, simulateInbound, type InboundTenant } from '../support/inbound.ts';

const OPT_OUT_KEYWORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT', 'OPT-OUT', 'REMOVE', 'ARRET'];
const PUNCTUATION = ['!', '.', '?!', ' !!', '...'];

/** The keyword as a person might type it: mixed case, padded, with trailing punctuation. */
const typed = (keyword: string, index: number) =>
  `  ${[...keyword].map((letter, i) => ((i + index) % 2 === 0 ? letter.toLowerCase() : letter)).join('')}${PUNCTUATION[index % PUNCTUATION.length]} `;

/** The account's outbound messages to `to`, oldest first, as the account lists them. */
async function messagesTo(tenant: InboundTenant, to: string) {
  const listed = await call('GET', `/messages?to=${encodeURIComponent(to)}`, { auth: tenant.key });
  expect(listed.status).to.equal(200);
  return listed.body.data.reverse() as { id: string; from: string; to: string; body: string; status: string; cost: number }[];
}

const balanceOf = async (tenant: InboundTenant) => (await call('GET', '/balance', { auth: tenant.key })).body.data.balance;

const send = (tenant: InboundTenant, to: string) =>
  call('POST', '/messages/send', { auth: tenant.key, body: { from: 'Dispatch', to, body: 'Our summer sale starts today' } });

describe('keywords in inbound messages', () => {
  OPT_OUT_KEYWORDS.forEach((keyword, index) => {
    const text = typed(keyword, index);
    it(`opts the sender out on ${JSON.stringify(text)}, confirms once from the number, then refuses a send to it and charges nothing`, async () => {
      const tenant = await inboundTenant();
      const handset = randomHandset();
      const stored = await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: text });
      expect(stored.keyword).to.equal(keyword);

      const [confirmation] = await messagesTo(tenant, handset);
      expect(confirmation).to.include({ from: tenant.number, to: handset, body: DEFAULT_REPLIES.opt_out, cost: 0.01 });
      const balance = await balanceOf(tenant);

      expectError(await send(tenant, handset), 400, 'recipient_opted_out', 'to');
      expect(await balanceOf(tenant)).to.equal(balance);
      expect((await messagesTo(tenant, handset)).map((message) => message.id)).to.deep.equal([confirmation.id]);
    });
  });

  it('sends the STOP confirmation once, and it is delivered, billed and reported like any message', async () => {
    const tenant = await inboundTenant();
    const handset = randomHandset();
    await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'STOP' });
    await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'stop' });
    const [confirmation] = await messagesTo(tenant, handset);
    await eventually(
      async () => (await call('GET', `/messages/${confirmation.id}`, { auth: tenant.key })).body.data.status,
      (status) => status === 'delivered',
    );
    expect(await messagesTo(tenant, handset)).to.have.length(1);
    expect(await balanceOf(tenant)).to.equal(9.99);
    const events = await call('GET', '/events', { auth: tenant.key });
    expect(events.body.data.filter((event) => 'id' in event.data && event.data.id === confirmation.id).map((event) => event.type)).to.deep.equal([
      'message.delivered',
      'message.sent',
    ]);
  });

  it('fails only the opted-out recipient of a bulk send', async () => {
    const tenant = await inboundTenant();
    const stopped = randomHandset();
    const others = [randomHandset(), randomHandset()];
    await simulateInbound(tenant.routeId, { from: stopped, to: tenant.number, body: 'Stop.' });
    const bulk = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { from: 'Dispatch', recipients: [others[0], stopped, others[1]], body: 'Sale!' },
    });
    expect(bulk.status).to.equal(201);
    expect(bulk.body.data).to.include({ total: 3, sent: 2, failed: 1 });
    expect(
      bulk.body.data.messages.map((message: { status: string; error: { code: string } | null }) => [message.status, message.error?.code ?? null]),
    ).to.deep.equal([
      ['pending', null],
      ['failed', 'recipient_opted_out'],
      ['pending', null],
    ]);
  });

  it('re-enables sending on START, confirming each change once from the number', async () => {
    const tenant = await inboundTenant();
    const handset = randomHandset();
    await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'STOP' });
    expectError(await send(tenant, handset), 400, 'recipient_opted_out', 'to');
    const started = await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'Start!' });
    expect(started.keyword).to.equal('START');

    expect((await send(tenant, handset)).status).to.equal(201);
    expect((await messagesTo(tenant, handset)).map((message) => [message.from, message.body])).to.deep.equal([
      [tenant.number, DEFAULT_REPLIES.opt_out],
      [tenant.number, DEFAULT_REPLIES.opt_in],
      ['Dispatch', 'Our summer sale starts today'],
    ]);
  });

  it('answers HELP with the help text, from the short code that received it, once', async () => {
    const tenant = await inboundTenant({ type: 'short_code' });
    const handset = randomHandset();
    const stored = await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'help?' });
    expect(stored.keyword).to.equal('HELP');
    expect((await messagesTo(tenant, handset)).map((message) => [message.from, message.to, message.body])).to.deep.equal([
      [tenant.number, handset, DEFAULT_REPLIES.help],
    ]);
    expect((await send(tenant, handset)).status).to.equal(201);
  });

  it("acts on the account's own keywords and answers with its own texts", async () => {
    const tenant = await inboundTenant();
    const help = 'Acme Shipping: parcel alerts. Help: acme.example/help. Reply HALT to unsubscribe.';
    const updated = await call('POST', '/keywords/update', {
      auth: tenant.key,
      body: { opt_out: { keywords: ['HALT'], reply: 'Halted.' }, help: { reply: help } },
    });
    expect(updated.status, JSON.stringify(updated.body)).to.equal(200);
    const handset = randomHandset();
    expect((await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'info' })).keyword).to.equal('INFO');
    expect((await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'Halt!' })).keyword).to.equal('HALT');
    expect((await messagesTo(tenant, handset)).map((message) => message.body)).to.deep.equal([help, 'Halted.']);
    expectError(await send(tenant, handset), 400, 'recipient_opted_out', 'to');
  });

  it('keeps an opt-out the account imported when the number replies START, and sends it nothing', async () => {
    const tenant = await inboundTenant();
    const handset = randomHandset();
    expect(
      (await call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers: [handset], reason: 'Imported from our previous provider' } })).status,
    ).to.equal(200);
    expect((await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'START' })).keyword).to.equal('START');
    expect(await messagesTo(tenant, handset)).to.deep.equal([]);
    expectError(await send(tenant, handset), 400, 'recipient_opted_out', 'to');
  });

  it('leaves a message that only contains a keyword alone', async () => {
    const tenant = await inboundTenant();
    const handset = randomHandset();
    expect((await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'Please stop the deliveries' })).keyword).to.equal(null);
    expect(await messagesTo(tenant, handset)).to.deep.equal([]);
    expect((await send(tenant, handset)).status).to.equal(201);
  });

  it('still stores the message and opts the number out when the confirmation cannot be paid for', async () => {
    const tenant = await inboundTenant({ balance: 0 });
    const handset = randomHandset();
    const stored = await simulateInbound(tenant.routeId, { from: handset, to: tenant.number, body: 'STOP' });
    expect(stored.keyword).to.equal('STOP');
    expect(await messagesTo(tenant, handset)).to.deep.equal([]);
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId, number: handset })).to.have.length(1);
    expect((await call('GET', `/inbound-messages/${stored.id}`, { auth: tenant.key })).status).to.equal(200);
  });
});
