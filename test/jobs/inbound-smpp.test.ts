import { expect } from 'chai';
import { connect } from '../../db/connection.ts';
import type { Knex } from 'knex';
import { QUEUES } from '../../db/queues.ts';
import type { Dispatch } from '../../app/server.ts';
import { call } from '../support/client.ts';
import { DatabaseRelay } from '../support/database-relay.ts';
import { FakeSmsc } from '../support/fake-smsc.ts';
import { eventually, waitForMessage } from '../support/fixtures.ts';
import { harness, startInstance } from '../support/harness.ts';
import { inboundTenant, randomHandset, type InboundTenant } from '../support/inbound.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

const ESME_RX_T_APPN = 0x64;
const ESME_RX_P_APPN = 0x65;
const UDHI = 0x40;

const smppRoute = (smsc: FakeSmsc) => ({
  provider: 'smpp' as const,
  config: { host: '127.0.0.1', port: smsc.port, system_id: FakeSmsc.SYSTEM_ID, password: FakeSmsc.PASSWORD },
});
const digits = (number: string) => number.replace(/^\+/, '');
const ucs2 = (text: string) => Buffer.from(text, 'utf16le').swap16();
const udh8 = (reference: number, total: number, sequence: number) => Buffer.from([0x05, 0x00, 0x03, reference, total, sequence]);
const udh16 = (reference: number, total: number, sequence: number) => Buffer.from([0x06, 0x08, 0x04, reference >> 8, reference & 0xff, total, sequence]);

/** The bytes cut into `count` pieces of whole UTF-16 code units (a surrogate pair may be cut: it must still join). */
function cut(bytes: Buffer, count: number): Buffer[] {
  const size = Math.ceil(bytes.length / 2 / count) * 2;
  return Array.from({ length: count }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
}

async function storedInbound(db: Knex, routeId: number) {
  return db('inbound_messages').where({ route_id: routeId }).orderBy('created_at');
}

/** An SMPP route on a sibling Dispatch of its own (its own database), bound to the fake SMSC. */
async function smppRouteOn(instance: Dispatch, smsc: FakeSmsc): Promise<number> {
  const route = await call('POST', '/admin/routes', {
    auth: 'admin',
    baseUrl: instance.baseUrl,
    body: { name: 'SMSC', ...smppRoute(smsc), price_per_segment: 0.01 },
  });
  expect(route.status, JSON.stringify(route.body)).to.equal(201);
  await smsc.waitFor(() => smsc.boundSessions === 1, 10_000);
  return route.body.data.id;
}

describe('inbound messages over SMPP', function () {
  this.timeout(60_000);
  let smsc: FakeSmsc;
  let tenant: InboundTenant;

  beforeEach(async () => {
    smsc = await FakeSmsc.start();
    tenant = await inboundTenant({ routes: [smppRoute(smsc)] });
    // Bound to receive without any send through it.
    await smsc.waitFor(() => smsc.boundSessions === 1, 10_000);
  });

  afterEach(async () => {
    await smsc.stop();
  });

  const inbound = (fields: { data_coding: number; short_message: Buffer; esm_class?: number; source_addr?: string } & Record<string, unknown>) =>
    smsc.sendInbound({ source_addr: digits(fields.source_addr ?? '447911123456'), destination_addr: digits(tenant.number), ...fields });

  it('handles a receipt and inbound messages interleaved on one bind, each as what it is', async () => {
    const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: '+14155550123', from: 'Dispatch', body: 'Your order is ready' } });
    const message = await waitForMessage(tenant, sent.body.data.id, (m) => m.status === 'sent');
    const from = randomHandset();
    const statuses = await Promise.all([
      inbound({ source_addr: from, data_coding: 0, short_message: Buffer.from('On my way') }),
      smsc.sendReceipt(message.provider_message_id!, 'DELIVRD'),
      inbound({ source_addr: from, data_coding: 0, short_message: Buffer.from('Thanks') }),
    ]);
    expect(statuses).to.deep.equal([0, 0, 0]);

    await waitForMessage(tenant, message.id, (m) => m.status === 'delivered');
    const listed = (await call('GET', '/inbound-messages', { auth: tenant.key })).body.data;
    expect(listed.map((m) => m.body).sort()).to.deep.equal(['On my way', 'Thanks']);
    expect(listed.every((m) => m.from === from && m.to === tenant.number && m.route_id === tenant.routeId && m.encoding === 'GSM-7')).to.equal(true);
    // The receipt was no inbound message, and the inbound messages were no receipts.
    expect(await harness.db('early_reports').where({ route_id: tenant.routeId })).to.have.length(0);
  });

  it('reassembles a three-part UCS-2 message that arrives out of order (3, 1, 2) exactly, once', async () => {
    const body = `Привет! ${'ж'.repeat(150)} 😀 конец — ✓`;
    const parts = cut(ucs2(body), 3);
    expect(await inbound({ data_coding: 8, esm_class: UDHI, short_message: Buffer.concat([udh8(0x5c, 3, 3), parts[2]]) })).to.equal(0);
    expect(await inbound({ data_coding: 8, esm_class: UDHI, short_message: Buffer.concat([udh8(0x5c, 3, 1), parts[0]]) })).to.equal(0);
    // Each part was stored before it was acknowledged, and no message is made of two of three.
    expect(await harness.db('inbound_parts').where({ route_id: tenant.routeId, completed_at: null })).to.have.length(2);
    expect(await storedInbound(harness.db, tenant.routeId)).to.have.length(0);
    // A repeat of a part changes nothing.
    expect(await inbound({ data_coding: 8, esm_class: UDHI, short_message: Buffer.concat([udh8(0x5c, 3, 1), parts[0]]) })).to.equal(0);
    expect(await inbound({ data_coding: 8, esm_class: UDHI, short_message: Buffer.concat([udh8(0x5c, 3, 2), parts[1]]) })).to.equal(0);

    const stored = await storedInbound(harness.db, tenant.routeId);
    expect(stored).to.have.length(1);
    expect(stored[0]).to.include({
      body,
      encoding: 'UCS-2',
      segments: 3,
      complete: true,
      from: '+447911123456',
      to: tenant.number,
      account_id: tenant.accountId,
    });
    // A part repeated after its message was stored is a repeat still, not the start of another message.
    expect(await inbound({ data_coding: 8, esm_class: UDHI, short_message: Buffer.concat([udh8(0x5c, 3, 3), parts[2]]) })).to.equal(0);
    expect(await harness.db('inbound_parts').where({ route_id: tenant.routeId, completed_at: null })).to.have.length(0);
    expect(await storedInbound(harness.db, tenant.routeId)).to.have.length(1);
  });

  it('decodes GSM-7 with extension characters and Latin-1 exactly', async () => {
    // "Total: 5€ [ok] {x|y} ~^\ @£$" as unpacked GSM 03.38.
    const gsm = Buffer.from([
      0x54, 0x6f, 0x74, 0x61, 0x6c, 0x3a, 0x20, 0x35, 0x1b, 0x65, 0x20, 0x1b, 0x3c, 0x6f, 0x6b, 0x1b, 0x3e, 0x20, 0x1b, 0x28, 0x78, 0x1b, 0x40, 0x79, 0x1b,
      0x29, 0x20, 0x1b, 0x3d, 0x1b, 0x14, 0x1b, 0x2f, 0x20, 0x00, 0x01, 0x02,
    ]);
    expect(await inbound({ data_coding: 0, short_message: gsm })).to.equal(0);
    expect(await inbound({ data_coding: 3, short_message: Buffer.from('Ça coûte 5 £, ¿sí? ÿ', 'latin1') })).to.equal(0);
    const stored = await storedInbound(harness.db, tenant.routeId);
    expect(stored.map((m) => [m.body, m.encoding])).to.deep.equal([
      ['Total: 5€ [ok] {x|y} ~^\\ @£$', 'GSM-7'],
      ['Ça coûte 5 £, ¿sí? ÿ', 'Latin-1'],
    ]);
  });

  it('keeps messages with 8-bit and 16-bit references apart, whichever way their parts interleave', async () => {
    const short = 'Part one of the 8-bit message, '.repeat(2);
    const eight = [short.slice(0, 40), short.slice(40)];
    const sixteen = ['Sixteen-bit reference, ', 'second half.'];
    const from = randomHandset();
    // The same low byte (0x34) in both references.
    expect(
      await inbound({ source_addr: from, data_coding: 0, esm_class: UDHI, short_message: Buffer.concat([udh16(0x1234, 2, 2), Buffer.from(sixteen[1])]) }),
    ).to.equal(0);
    expect(
      await inbound({ source_addr: from, data_coding: 0, esm_class: UDHI, short_message: Buffer.concat([udh8(0x34, 2, 2), Buffer.from(eight[1])]) }),
    ).to.equal(0);
    expect(
      await inbound({ source_addr: from, data_coding: 0, esm_class: UDHI, short_message: Buffer.concat([udh8(0x34, 2, 1), Buffer.from(eight[0])]) }),
    ).to.equal(0);
    expect(
      await inbound({ source_addr: from, data_coding: 0, esm_class: UDHI, short_message: Buffer.concat([udh16(0x1234, 2, 1), Buffer.from(sixteen[0])]) }),
    ).to.equal(0);
    const stored = await storedInbound(harness.db, tenant.routeId);
    expect(stored.map((m) => [m.body, m.segments, m.complete])).to.deep.equal([
      [short, 2, true],
      [sixteen.join(''), 2, true],
    ]);
  });

  it('refuses for good (ESME_RX_P_APPN) a message in a data_coding Dispatch does not store', async () => {
    expect(await inbound({ data_coding: 4, short_message: Buffer.from([1, 2, 3]) })).to.equal(ESME_RX_P_APPN);
    expect(await storedInbound(harness.db, tenant.routeId)).to.have.length(0);
  });
});

describe('inbound messages over SMPP, on a Dispatch of their own', function () {
  this.timeout(90_000);
  let smsc: FakeSmsc;
  let database: { url: string; drop: () => Promise<void> };
  let instance: Dispatch | undefined;
  let relay: DatabaseRelay | undefined;
  let db: Knex;

  beforeEach(async () => {
    smsc = await FakeSmsc.start();
    database = await siblingDatabase();
    db = connect(database.url, 2);
  });

  afterEach(async () => {
    relay?.up();
    await instance?.stop();
    await relay?.close();
    await smsc.stop();
    await db.destroy();
    await database.drop();
    instance = undefined;
    relay = undefined;
  });

  it('stores a lone part, marked incomplete, once its siblings have not come within INBOUND_PART_TIMEOUT_SECONDS', async () => {
    instance = await startInstance(database.url, { INBOUND_PART_TIMEOUT_SECONDS: '1' });
    const routeId = await smppRouteOn(instance, smsc);
    expect(
      await smsc.sendInbound({
        source_addr: '447911123456',
        destination_addr: '447911223344',
        data_coding: 0,
        esm_class: UDHI,
        short_message: Buffer.concat([udh8(9, 3, 2), Buffer.from('the middle')]),
      }),
    ).to.equal(0);
    expect(await storedInbound(db, routeId)).to.have.length(0);

    // The reconciler runs every minute; a run asked for now stores what has waited out its second.
    const stored = await eventually(
      async () => {
        await instance!.boss.send(QUEUES.reconcile.name, {});
        return storedInbound(db, routeId);
      },
      (rows) => rows.length > 0,
      { timeoutMs: 30_000, what: 'the incomplete message' },
    );
    expect(stored).to.have.length(1);
    // No account holds the number: kept for the operator.
    expect(stored[0]).to.include({ body: 'the middle', segments: 1, complete: false, account_id: null, from: '+447911123456', to: '+447911223344' });
  });

  it('leaves a deliver_sm unacknowledged while the database is out, and stores it once when the SMSC delivers it again', async () => {
    const server = new URL(database.url);
    relay = await DatabaseRelay.start({ host: server.hostname, port: Number(server.port || 5432) });
    const relayed = new URL(database.url);
    relayed.hostname = '127.0.0.1';
    relayed.port = String(relay.port);
    instance = await startInstance(relayed.toString());
    const routeId = await smppRouteOn(instance, smsc);

    relay.down();
    smsc.redeliverAfterMs = 100;
    const message = {
      source_addr: '447911123456',
      destination_addr: '447911223344',
      data_coding: 0,
      short_message: Buffer.from('Reply while the database is out'),
    };
    expect(await smsc.sendInbound(message)).to.equal(ESME_RX_T_APPN);
    expect(await storedInbound(db, routeId)).to.have.length(0);

    relay.up();
    await smsc.waitFor(() => smsc.inbound[0].statuses.at(-1) === 0, 30_000);
    const statuses = smsc.inbound[0].statuses;
    expect(statuses.slice(0, -1).every((status) => status === ESME_RX_T_APPN)).to.equal(true);
    const stored = await storedInbound(db, routeId);
    expect(stored).to.have.length(1);
    expect(stored[0]).to.include({ body: 'Reply while the database is out', complete: true });
  });
});
