import { expect } from 'chai';
import { call } from '../support/client.ts';
import { FakeSmsc } from '../support/fake-smsc.ts';
import { sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';
const ESME_RTHROTTLED = 0x58;

describe('sending through an SMPP provider', () => {
  let smsc: FakeSmsc;
  let backup: FakeSmsc;

  beforeEach(async () => {
    smsc = await FakeSmsc.start();
    backup = await FakeSmsc.start();
  });

  afterEach(async () => {
    await smsc.stop();
    await backup.stop();
  });

  const smppRoute = (peer: FakeSmsc) => ({
    provider: 'smpp' as const,
    config: { host: '127.0.0.1', port: peer.port, system_id: FakeSmsc.SYSTEM_ID, password: FakeSmsc.PASSWORD },
  });

  it('sends a long UCS-2 message as concatenated parts and applies the DELIVRD receipt', async () => {
    const tenant = await sendingTenant({ routes: [smppRoute(smsc)] });
    const body = `Привет! ${'ж'.repeat(130)} 😀`;
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body } });
    expect(response.body.data).to.include({ encoding: 'UCS-2', segments: 3 });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent.status).to.equal('sent');
    expect(smsc.submits).to.have.length(3);
    expect(smsc.submits.every((s) => s.dataCoding === 8 && s.esmClass === 0x40 && s.destinationAddr === '14155550123')).to.equal(true);
    expect(smsc.submits.map((s) => s.text).join('')).to.equal(body);
    expect(sent.provider_message_id).to.equal(smsc.submits[0].messageId);

    // Each part has its own id and receipt: delivered only once every part is.
    const partIds = smsc.submits.map((submit) => submit.messageId);
    expect(await smsc.sendReceipt(partIds[0], 'DELIVRD')).to.equal(0);
    expect(await smsc.sendReceipt(partIds[2], 'DELIVRD')).to.equal(0);
    expect((await waitForMessage(tenant, sent.id, () => true)).status).to.equal('sent');
    expect(await smsc.sendReceipt(partIds[1], 'DELIVRD')).to.equal(0);
    await waitForMessage(tenant, sent.id, (m) => m.status === 'delivered');
    expect(await harness.db('early_reports').whereIn('provider_message_id', partIds)).to.have.length(0);
  });

  it('marks a concatenated message undelivered as soon as one part is, and ignores the later parts', async () => {
    const tenant = await sendingTenant({ routes: [smppRoute(smsc)] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'x'.repeat(200) } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    const partIds = smsc.submits.map((submit) => submit.messageId);
    expect(partIds).to.have.length(2);
    await smsc.sendReceipt(partIds[1], 'UNDELIV', '034');
    await waitForMessage(tenant, sent.id, (m) => m.status === 'undelivered');
    expect(await smsc.sendReceipt(partIds[0], 'DELIVRD')).to.equal(0);
    const events = await harness.db('events').where({ message_id: sent.id }).orderBy('created_at').pluck('type');
    expect(events).to.deep.equal(['message.sent', 'message.failed']);
    expect((await waitForMessage(tenant, sent.id, () => true)).status).to.equal('undelivered');
  });

  it('keeps the raw stat and err of an UNDELIV receipt', async () => {
    const tenant = await sendingTenant({ routes: [smppRoute(smsc)] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'sent');
    await smsc.sendReceipt(sent.provider_message_id!, 'UNDELIV', '034');
    const undelivered = await waitForMessage(tenant, sent.id, (m) => m.status === 'undelivered');
    expect(undelivered.error!.message).to.include('stat:UNDELIV err:034');
  });

  it('fails over when the SMSC throttles (ESME_RTHROTTLED)', async () => {
    const tenant = await sendingTenant({ routes: [smppRoute(smsc), smppRoute(backup)] });
    smsc.respondWith(ESME_RTHROTTLED);
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', route_id: tenant.routeIds[1], attempts: 2 });
    const attempts = await harness.db('message_attempts').where({ message_id: sent.id }).orderBy('id');
    expect(attempts[0].error_message).to.match(/THROTTLED/);
  });

  it('rebinds after the SMSC drops the connection and keeps sending', async () => {
    const tenant = await sendingTenant({ routes: [smppRoute(smsc)] });
    const first = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'One' } });
    await waitForMessage(tenant, first.body.data.id, (m) => m.status === 'sent');
    smsc.dropConnections();
    const second = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Two' } });
    await waitForMessage(tenant, second.body.data.id, (m) => m.status === 'sent');
    expect(smsc.binds).to.be.at.least(2);
  });
});
