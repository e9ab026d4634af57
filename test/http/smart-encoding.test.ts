import { expect } from 'chai';
import { call } from '../support/client.ts';
import { createTenant, sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';
const CANNOT_EXIST = '+10005550100';
/** 100 characters: two UCS-2 segments as given (curly quotes, a dash), one GSM-7 segment smart-encoded. */
const GIVEN = '“Parcel AB-1042” arrives today between 10:00 and 12:00 – we’ll text you once the driver is nearby ok';
const REPLACED = '"Parcel AB-1042" arrives today between 10:00 and 12:00 - we\'ll text you once the driver is nearby ok';

const send = (tenant: Tenant, extra: Record<string, unknown> = {}) =>
  call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: GIVEN, ...extra } });

const setSmartEncoding = async (tenant: Tenant, on: boolean) => {
  const response = await call('PATCH', '/account', { auth: tenant.key, body: { smart_encoding: on } });
  expect(response.status, JSON.stringify(response.body)).to.equal(200);
  return response;
};

const AS_GIVEN = { body: GIVEN, encoding: 'UCS-2', segments: 2, cost: 0.02, smart_encoded: false };
const SMART = { body: REPLACED, encoding: 'GSM-7', segments: 1, cost: 0.01, smart_encoded: true };

describe('POST /messages/send with smart_encoding', () => {
  it('sends curly quotes as one GSM-7 segment, stores and answers the replaced body with smart_encoded true; without it, two UCS-2 segments at twice the cost', async () => {
    expect([...GIVEN]).to.have.length(100);
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.01 }] });

    const smart = await send(tenant, { smart_encoding: true });
    expect(smart.status).to.equal(201);
    expect(smart.body.data).to.include({ status: 'pending', ...SMART });
    const delivered = await waitForMessage(tenant, smart.body.data.id, (m) => m.status === 'delivered');
    expect(delivered).to.include(SMART);
    const row = await harness.db('messages').where({ id: smart.body.data.id }).first();
    expect(row).to.include({ body: REPLACED, smart_encoded: true, encoding: 'GSM-7', segments: 1, cost: '0.0100' });
    const events = await harness.db('events').where({ message_id: smart.body.data.id });
    expect(events.map((event) => event.data)).to.have.length.above(0);
    for (const event of events) expect(event.data).to.include({ body: REPLACED, smart_encoded: true });

    const plain = await send(tenant);
    expect(plain.status).to.equal(201);
    expect(plain.body.data).to.include(AS_GIVEN);
    expect((await call('GET', `/messages/${plain.body.data.id}`, { auth: tenant.key })).body.data).to.include(AS_GIVEN);
    expect((await harness.db('accounts').where({ id: tenant.accountId }).first()).balance).to.equal('0.9700');
  });

  it("applies the account's smart_encoding to sends that do not give one, and a send's false wins over it", async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    await setSmartEncoding(tenant, true);
    expect((await send(tenant)).body.data).to.include(SMART);
    expect((await send(tenant, { smart_encoding: false })).body.data).to.include(AS_GIVEN);

    await setSmartEncoding(tenant, false);
    expect((await send(tenant)).body.data).to.include(AS_GIVEN);
    expect((await send(tenant, { smart_encoding: true })).body.data).to.include(SMART);
  });

  it('plans sends of the same body that arrive together each by its own smart_encoding', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    const answers = await Promise.all([true, false, true, false, undefined].map((on) => send(tenant, on === undefined ? {} : { smart_encoding: on })));
    expect(answers.map((answer) => answer.body.data.smart_encoded)).to.deep.equal([true, false, true, false, false]);
    expect(answers.map((answer) => answer.body.data.body)).to.deep.equal([REPLACED, GIVEN, REPLACED, GIVEN, GIVEN]);
  });

  it('sends a body that holds a character with no look-alike as given, in UCS-2, smart_encoded false', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    const body = '“See you soon” 😀';
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body, smart_encoding: true } });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({ body, encoding: 'UCS-2', segments: 1, smart_encoded: false });
  });

  it('answers smart_encoded false for a GSM-7 body, which has nothing to replace', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Ça va? 5€', smart_encoding: true } });
    expect(response.body.data).to.include({ body: 'Ça va? 5€', encoding: 'GSM-7', smart_encoded: false });
  });
});

describe('POST /messages/bulk with smart_encoding', () => {
  const recipients = ['+14155550101', CANNOT_EXIST, '+14155550102', '+14155550103'];
  const bulk = (tenant: Tenant, extra: Record<string, unknown> = {}) =>
    call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients, from: 'Dispatch', body: GIVEN, ...extra } });

  it('replaces the look-alikes for every recipient, the one stored as failed included', async () => {
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.01 }] });
    const response = await bulk(tenant, { smart_encoding: true });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({ total: 4, sent: 3, failed: 1 });
    const [first, failed, ...rest] = response.body.data.messages;
    for (const message of [first, ...rest]) expect(message).to.include({ status: 'pending', ...SMART });
    expect(failed).to.include({ status: 'failed', body: REPLACED, encoding: 'GSM-7', segments: 1, cost: 0, smart_encoded: true });
    expect(failed.error!.code).to.equal('number_invalid');
    expect((await harness.db('accounts').where({ id: tenant.accountId }).first()).balance).to.equal('0.9700');
  });

  it("uses the account's smart_encoding when the request gives none, and the request's false wins over it", async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    await setSmartEncoding(tenant, true);
    const byDefault = (await bulk(tenant)).body.data.messages;
    expect(byDefault.map((m) => m.smart_encoded)).to.deep.equal([true, true, true, true]);
    expect(byDefault[0]).to.include(SMART);
    const refused = (await bulk(tenant, { smart_encoding: false })).body.data.messages;
    expect(refused.map((m) => m.smart_encoded)).to.deep.equal([false, false, false, false]);
    expect(refused[0]).to.include(AS_GIVEN);
  });
});

describe('PATCH /account smart_encoding', () => {
  it('is false until set, and is shown on the account, to the customer and the operator alike, once set or cleared', async () => {
    const tenant = await createTenant();
    expect((await call('GET', '/account', { auth: tenant.key })).body.data.smart_encoding).to.equal(false);
    expect((await setSmartEncoding(tenant, true)).body.data).to.include({ id: tenant.accountId, smart_encoding: true });
    expect((await call('GET', '/account', { auth: tenant.key })).body.data.smart_encoding).to.equal(true);
    expect((await call('GET', `/admin/accounts/${tenant.accountId}`, { auth: 'admin' })).body.data.smart_encoding).to.equal(true);
    expect((await setSmartEncoding(tenant, false)).body.data.smart_encoding).to.equal(false);
  });

  it('changes it beside the low-balance threshold in one request, and neither when one is refused', async () => {
    const tenant = await createTenant();
    const both = await call('PATCH', '/account', { auth: tenant.key, body: { smart_encoding: true, low_balance_threshold: 2 } });
    expect(both.body.data).to.include({ smart_encoding: true, low_balance_threshold: 2 });
    const refused = await call('PATCH', '/account', { auth: tenant.key, body: { smart_encoding: false, low_balance_threshold: 1.00001 } });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.param).to.equal('low_balance_threshold');
    expect((await call('GET', '/account', { auth: tenant.key })).body.data).to.include({ smart_encoding: true, low_balance_threshold: 2 });
  });

  it('answers 400 naming smart_encoding when it is not a boolean', async () => {
    const tenant = await createTenant();
    const response = await call('PATCH', '/account', { auth: tenant.key, body: { smart_encoding: 'yes' } });
    expect(response.status).to.equal(400);
    expect(response.body.error.param).to.equal('smart_encoding');
    expect((await call('GET', '/account', { auth: tenant.key })).body.data.smart_encoding).to.equal(false);
  });
});
