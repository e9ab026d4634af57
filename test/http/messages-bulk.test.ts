import { expect } from 'chai';
import { ledgerSum } from '../../db/ledger.ts';
import { SEND_JOB_MESSAGES } from '../../db/send-groups.ts';
import { call, expectError } from '../support/client.ts';
import { createAdminKey, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/** Valid US numbers +1 415 555 01xx .. : distinct, all routable. */
const usNumber = (i: number) => `+1415555${String(1000 + i).padStart(4, '0')}`;

describe('POST /messages/bulk', () => {
  it('sends 1,000 recipients with mixed failures in one request: each item independent, counts and ledger exact', async function () {
    this.timeout(60_000);
    const tenant = await sendingTenant({
      balance: 9.5,
      routes: [{ price: 0.01, prefixes: ['+1', '+49'], config: { outcome: 'delivered', dlr_delay_ms: 60_000 } }],
    });
    const blocked = usNumber(7);
    await call('POST', '/admin/blocklist', { auth: 'admin', body: { number: blocked, account_id: tenant.accountId } });
    const recipients = Array.from({ length: 1000 }, (_, i) => usNumber(i));
    recipients[3] = '+10005550100'; // cannot exist
    recipients[5] = '+33612345678'; // no route covers France
    // 997 sendable at 0.01 against 9.50: the first 950 are charged, the last 47 run out of balance.
    const response = await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients, from: 'Dispatch', body: 'Sale!', reference: 'campaign-7' } });
    expect(response.status).to.equal(201);
    const result = response.body.data;
    expect(result).to.include({ object: 'bulk_result', total: 1000, sent: 950, failed: 50 });
    expect(result.messages.map((m: { to: string }) => m.to)).to.deep.equal(recipients);
    const codeOf = (i: number) => result.messages[i].error?.code;
    expect([codeOf(3), codeOf(5), codeOf(7)]).to.deep.equal(['number_invalid', 'route_invalid', 'recipient_blocklisted']);
    expect(result.messages.slice(-47).every((m) => m.error?.code === 'insufficient_balance')).to.equal(true);
    expect(result.messages[0]).to.include({ status: 'pending', cost: 0.01, reference: 'campaign-7' });
    expect(result.messages[3]).to.include({ status: 'failed', cost: 0 });

    const balance = (await harness.db('accounts').where({ id: tenant.accountId }).first()).balance;
    expect(balance).to.equal('0.0000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('0.0000');
    expect(await harness.db('messages').where({ account_id: tenant.accountId }).count({ n: '*' })).to.deep.equal([{ n: 1000 }]);
    const failedEvents = await harness.db('events').where({ account_id: tenant.accountId, type: 'message.failed' }).count({ n: '*' });
    expect(failedEvents).to.deep.equal([{ n: 50 }]);
    // Each pending message is in exactly one send job, and the jobs carry up to SEND_JOB_MESSAGES each.
    const jobs = await harness.db.raw(
      `SELECT count(*)::int AS n, count(DISTINCT j.id)::int AS jobs FROM pgboss.job j CROSS JOIN jsonb_array_elements_text(j.data->'message_ids') AS carried (message_id) WHERE j.name = 'send-message' AND carried.message_id = ANY(?)`,
      [result.messages.filter((m: { status: string }) => m.status === 'pending').map((m: { id: string }) => m.id)],
    );
    expect(jobs.rows[0]).to.deep.equal({ n: 950, jobs: Math.ceil(950 / SEND_JOB_MESSAGES) });
  });

  it('sends each duplicate recipient as its own message', async () => {
    const tenant = await sendingTenant();
    const response = await call('POST', '/messages/bulk', {
      auth: tenant.key,
      body: { recipients: [usNumber(1), usNumber(1)], from: 'Dispatch', body: 'Twice' },
    });
    expect(response.body.data).to.include({ total: 2, sent: 2, failed: 0 });
    expect(response.body.data.messages[0].id).to.not.equal(response.body.data.messages[1].id);
  });

  it('stores a malformed recipient as its own failed message (number_invalid) and sends the others', async () => {
    const tenant = await sendingTenant();
    const recipients = [usNumber(1), '12345', '', usNumber(2)];
    const response = await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients, from: 'Dispatch', body: 'Hi' } });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({ total: 4, sent: 2, failed: 2 });
    const [first, malformed, empty, last] = response.body.data.messages;
    expect([first.status, last.status]).to.deep.equal(['pending', 'pending']);
    for (const [item, to] of [
      [malformed, '12345'],
      [empty, ''],
    ] as const) {
      expect(item).to.include({ to, status: 'failed', cost: 0 });
      expect(item.error).to.deep.equal({
        type: 'invalid_request_error',
        code: 'number_invalid',
        message: `The number '${to}' is not an E.164 number such as +447400123456.`,
      });
    }
    const listed = await call('GET', `/messages/${malformed.id}`, { auth: tenant.key });
    expect(listed.body.data).to.include({ to: '12345', status: 'failed' });
    const failedEvents = await harness.db('events').where({ account_id: tenant.accountId, type: 'message.failed' }).count({ n: '*' });
    expect(failedEvents).to.deep.equal([{ n: 2 }]);
  });

  it('answers 402 and stores nothing when the balance covers no recipient', async () => {
    const tenant = await sendingTenant({ balance: 0.001, routes: [{ price: 0.01 }] });
    expectError(
      await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients: [usNumber(1), usNumber(2)], from: 'Dispatch', body: 'Hi' } }),
      402,
      'insufficient_balance',
    );
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(0);
  });

  it('answers 201 with every item failed when no recipient can be sent to', async () => {
    const tenant = await sendingTenant({ routes: [{ prefixes: ['+49'] }] });
    const response = await call('POST', '/messages/bulk', { auth: tenant.key, body: { recipients: [usNumber(1)], from: 'Dispatch', body: 'Hi' } });
    expect(response.status).to.equal(201);
    expect(response.body.data).to.include({ sent: 0, failed: 1 });
  });

  const refusals: [string, Record<string, unknown>, number, string, string][] = [
    ['no recipients', { recipients: [] }, 400, 'parameter_invalid', 'recipients'],
    ['1,001 recipients', { recipients: Array.from({ length: 1001 }, (_, i) => usNumber(i)) }, 400, 'parameter_invalid', 'recipients'],
    ['a recipient that is not a string', { recipients: [usNumber(1), 4155550123] }, 400, 'parameter_invalid', 'recipients[1]'],
    ['a recipient over 64 characters', { recipients: [usNumber(1), '1'.repeat(65)] }, 400, 'parameter_invalid', 'recipients[1]'],
    ['a sender that is not approved', { from: 'Nobody' }, 400, 'sender_not_approved', 'from'],
    ["a route that is not the account's", { route_id: 999999 }, 400, 'route_invalid', 'route_id'],
    ['a body over 1,600 code points', { body: 'x'.repeat(1601) }, 400, 'parameter_invalid', 'body'],
  ];
  for (const [what, change, status, code, param] of refusals) {
    it(`answers ${status} ${code} for ${what}, storing nothing`, async () => {
      const tenant = await sendingTenant();
      const body = { recipients: [usNumber(1)], from: 'Dispatch', body: 'Hi', ...change };
      expectError(await call('POST', '/messages/bulk', { auth: tenant.key, body }), status, code, param);
      expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(0);
    });
  }

  it("refuses a bulk that would cross the key's daily limit whole, with 429", async () => {
    const tenant = await sendingTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Capped', daily_limit: 3 });
    expectError(
      await call('POST', '/messages/bulk', { auth: key.plain_key, body: { recipients: [1, 2, 3, 4].map(usNumber), from: 'Dispatch', body: 'Hi' } }),
      429,
      'daily_limit_exceeded',
    );
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(0);
    expect(
      (await call('POST', '/messages/bulk', { auth: key.plain_key, body: { recipients: [1, 2, 3].map(usNumber), from: 'Dispatch', body: 'Hi' } })).status,
    ).to.equal(201);
  });
});
