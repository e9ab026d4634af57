import { expect } from 'chai';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, sendingTenant, waitForMessage, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';

/** Bodies at the edges of the segment rules (domain/encoding.ts): GSM-7, its extension table, UCS-2 and astral characters. */
const CORPUS: string[] = [
  'a',
  'a'.repeat(160),
  'a'.repeat(161),
  'a'.repeat(306),
  'a'.repeat(307),
  'a'.repeat(158) + '€',
  'a'.repeat(159) + '€',
  'a'.repeat(152) + '€' + 'a'.repeat(10),
  'a'.repeat(151) + '€' + 'a'.repeat(10),
  'ç'.repeat(70),
  'ç'.repeat(71),
  'ç'.repeat(134),
  'ç'.repeat(135),
  '😀'.repeat(35),
  '😀'.repeat(36),
  'a'.repeat(66) + '😀' + 'a'.repeat(5),
  '“Your parcel” arrives today — at 10:00…',
  'Ünïcödé ñ ü é à ò',
  'x'.repeat(1600),
];

const rowCounts = async (tenant: Tenant, keyIds: string[]) => ({
  messages: await harness.db('messages').where({ account_id: tenant.accountId }).count({ n: '*' }).first(),
  ledger: await harness.db('ledger_entries').where({ account_id: tenant.accountId }).count({ n: '*' }).first(),
  keyCounts: await harness.db('key_send_counts').whereIn('api_key_id', keyIds).select('api_key_id', 'period', 'count').orderBy(['api_key_id', 'period']),
  balance: (await harness.db('accounts').where({ id: tenant.accountId }).first('balance')).balance,
});

const preview = (tenant: Tenant | { key: string }, body: Record<string, unknown>) =>
  call('POST', '/messages/preview', { auth: tenant.key, body: { from: 'Dispatch', ...body } });

describe('POST /messages/preview', function () {
  this.timeout(120_000);

  it('answers, for every body of the segment corpus, the encoding, segments, route and cost the real send gets', async () => {
    const tenant = await sendingTenant({ balance: 100, routes: [{ price: 0.0125 }, { price: 0.5 }] });
    for (const body of CORPUS) {
      const previewed = await preview(tenant, { to: TO, body });
      expect(previewed.status).to.equal(200);
      const [recipient] = previewed.body.data.recipients;
      const sent = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body } });
      expect(sent.status).to.equal(201);
      const taken = await waitForMessage(tenant, sent.body.data.id, (message) => message.route_id !== null);
      expect(
        { encoding: recipient.encoding, segments: recipient.segments, cost: recipient.cost, route_id: recipient.route_id, body: recipient.body },
        `body of ${[...body].length} code points`,
      ).to.deep.equal({ encoding: taken.encoding, segments: taken.segments, cost: taken.cost, route_id: taken.route_id, body: taken.body });
      expect(recipient.refusal).to.equal(null);
    }
  });

  it('names the characters that force UCS-2 with their positions in code points', async () => {
    const tenant = await sendingTenant();
    const previewed = await preview(tenant, { to: TO, body: 'Hi “Ann” 😀 ç' });
    expect(previewed.body.data.recipients[0].ucs2_characters).to.deep.equal([
      { character: '“', position: 3 },
      { character: '”', position: 7 },
      { character: '😀', position: 9 },
      { character: 'ç', position: 11 },
    ]);
    expect((await preview(tenant, { to: TO, body: 'Plain é € text' })).body.data.recipients[0].ucs2_characters).to.deep.equal([]);
  });

  it('answers the refusal the send would meet, for the sender, route, number, blocklist, opt-out, limits and balance, and writes nothing', async () => {
    const tenant = await sendingTenant({ balance: 0.02 });
    await call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers: ['+14155550140'] } });
    await call('POST', '/admin/blocklist', { auth: 'admin', body: { number: '+14155550141', account_id: tenant.accountId } });
    const limited = await createAdminKey(tenant.accountId, { name: 'One a day', daily_limit: 1 });
    // The key's one message of the day, and 0.01 of the balance, are spent.
    expect((await call('POST', '/messages/send', { auth: limited.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
    const [unrouted] = (await sendingTenant()).routeIds;
    const cases: [Record<string, unknown>, { key?: string }][] = [
      [{ to: TO, from: 'Nobody' }, {}],
      [{ to: TO, route_id: unrouted }, {}],
      [{ to: '+1415555' }, {}],
      [{ to: '+14155550141' }, {}],
      [{ to: '+14155550140' }, {}],
      [{ to: TO }, { key: limited.plain_key }],
      [{ to: TO, body: 'ç'.repeat(300) }, {}],
    ];
    const before = await rowCounts(tenant, [tenant.keyId, limited.id]);
    for (const [body, { key }] of cases) {
      const auth = { key: key ?? tenant.key };
      const previewed = await preview(auth, { body: 'Hi', ...body });
      const refusal = previewed.body.data.recipients[0].refusal!;
      expect(refusal, JSON.stringify(body)).to.not.equal(null);
      expect(await rowCounts(tenant, [tenant.keyId, limited.id]), JSON.stringify(body)).to.deep.equal(before);
      const sent = await call('POST', '/messages/send', { auth: auth.key, body: { from: 'Dispatch', body: 'Hi', ...body } });
      expect(sent.status, JSON.stringify(body)).to.equal(refusal.status);
      expect(sent.body.error, JSON.stringify(body)).to.include({ code: refusal.error.code });
      if (refusal.error.param !== undefined) expect(sent.body.error.param).to.equal(refusal.error.param);
    }
  });

  it('previews the body smart encoding would send, and the characters that still force UCS-2 in it', async () => {
    const tenant = await sendingTenant();
    const smart = await preview(tenant, { to: TO, body: '“Hi” — ok 😀', smart_encoding: true });
    expect(smart.body.data.recipients[0]).to.include({ smart_encoded: false, encoding: 'UCS-2', body: '“Hi” — ok 😀' });
    const replaced = await preview(tenant, { to: TO, body: '“Hi” — ok', smart_encoding: true });
    expect(replaced.body.data.recipients[0]).to.include({ smart_encoded: true, encoding: 'GSM-7', body: '"Hi" - ok' });
    expect(replaced.body.data.recipients[0].ucs2_characters).to.deep.equal([]);
  });

  it('previews a bulk per recipient, refusing past the balance in order, and sums the cost of the sendable ones', async () => {
    const tenant = await sendingTenant({ balance: 0.025 });
    harness.clock.set(new Date('2031-05-19T09:00:00Z'));
    const previewed = await preview(tenant, { body: 'Hi', recipients: [TO, 'bogus', '+14155550124', '+14155550125'], send_at: '2031-05-20T09:00:00Z' });
    expect(previewed.status).to.equal(200);
    const data = previewed.body.data;
    expect(data).to.include({ object: 'message_preview', total: 4, sendable: 2, refused: 2, cost: 0.02, currency: 'USD' });
    expect(data.recipients.map((recipient: { refusal: { error: { code: string } } | null }) => recipient.refusal?.error.code ?? null)).to.deep.equal([
      null,
      'number_invalid',
      null,
      'insufficient_balance',
    ]);
    expect(data.recipients[0].send_at).to.equal('2031-05-20T09:00:00.000Z');
  });

  it('refuses a body with both or neither of to and recipients, naming to', async () => {
    const tenant = await sendingTenant();
    expectError(await preview(tenant, { body: 'Hi' }), 400, 'parameter_invalid', 'to');
    expectError(await preview(tenant, { body: 'Hi', to: TO, recipients: [TO] }), 400, 'parameter_invalid', 'to');
  });
});
