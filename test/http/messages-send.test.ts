import { expect } from 'chai';
import pg from 'pg';
import { ledgerSum } from '../../db/ledger.ts';
import { JOBS_CHANNEL, jobQueueOf, QUEUES } from '../../db/queues.ts';
import { call, expectError } from '../support/client.ts';
import { addRoute, createAdminKey, eventually, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+14155550123';

async function balanceOf(accountId: string): Promise<string> {
  return (await harness.db('accounts').where({ id: accountId }).first()).balance;
}

async function storedFor(accountId: string) {
  return {
    messages: await harness.db('messages').where({ account_id: accountId }),
    ledger: await harness.db('ledger_entries').where({ account_id: accountId }).orderBy('id'),
  };
}

describe('POST /messages/send', () => {
  it('accepts a message as pending, charges segments x price, and it goes sent then delivered with an event for each', async () => {
    const tenant = await sendingTenant({ balance: 1, routes: [{ price: 0.0075, config: { outcome: 'delivered', dlr_delay_ms: 100 } }] });
    const response = await call('POST', '/messages/send', {
      auth: tenant.key,
      body: { to: TO, from: 'Dispatch', body: 'Hello from Dispatch', reference: 'order-42' },
    });
    expect(response.status).to.equal(201);
    const message = response.body.data;
    expect(message).to.include({
      object: 'message',
      to: TO,
      from: 'Dispatch',
      status: 'pending',
      cost: 0.0075,
      currency: 'USD',
      encoding: 'GSM-7',
      segments: 1,
      reference: 'order-42',
      attempts: 0,
      route_id: null,
    });
    expect(message.id).to.match(/^msg_[0-9A-Za-z]{24}$/);
    expect(await balanceOf(tenant.accountId)).to.equal('0.9925');

    // Not a look at `sent` in passing: a report that overtakes the recording of the acceptance is
    // applied with it, so `sent` may never be seen from outside. The events show the order.
    const delivered = await waitForMessage(tenant, message.id, (m) => m.status === 'delivered');
    expect(delivered).to.include({ route_id: tenant.routeIds[0], attempts: 1 });
    expect(delivered.provider_message_id).to.be.a('string');
    expect(delivered.sent_at).to.be.a('string');
    expect(delivered.delivered_at).to.be.a('string');

    const events = await harness.db('events').where({ message_id: message.id }).orderBy('created_at');
    expect(events.map((e) => e.type)).to.deep.equal(['message.sent', 'message.delivered']);
    expect(events[0].data).to.include({ id: message.id, status: 'sent', reference: 'order-42' });
    expect(events[1].data).to.include({ status: 'delivered' });
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal(await balanceOf(tenant.accountId));
  });

  it('charges per segment: a 161-character GSM-7 body is two segments, a 71-unit UCS-2 body two', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }] });
    const gsm = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'a'.repeat(161) } });
    expect(gsm.body.data).to.include({ encoding: 'GSM-7', segments: 2, cost: 0.02 });
    const ucs = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'ж'.repeat(71) } });
    expect(ucs.body.data).to.include({ encoding: 'UCS-2', segments: 2, cost: 0.02 });
  });

  it('counts the 1,600-character limit in code points: 1,600 emoji pass, 1,601 do not', async () => {
    const tenant = await sendingTenant({ balance: 100, routes: [{ price: 0.001 }] });
    const ok = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: '😀'.repeat(1600) } });
    expect(ok.status).to.equal(201);
    expect(ok.body.data.segments).to.equal(49);
    expectError(
      await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: '😀'.repeat(1601) } }),
      400,
      'parameter_invalid',
      'body',
    );
  });

  const refusals: [string, Record<string, unknown>, number, string, string][] = [
    ['a number not in E.164', { to: '07700900123' }, 400, 'parameter_invalid', 'to'],
    ['a number that cannot exist', { to: '+10005550100' }, 400, 'number_invalid', 'to'],
    ['a sender that is not approved', { from: 'Unknown' }, 400, 'sender_not_approved', 'from'],
    ['a missing body', { body: undefined }, 400, 'parameter_missing', 'body'],
    ['an empty body', { body: '' }, 400, 'parameter_invalid', 'body'],
    ['an unknown field', { priority: 'high' }, 400, 'parameter_unknown', 'priority'],
    ['a route that is not assigned', { route_id: 999999 }, 400, 'route_invalid', 'route_id'],
  ];
  for (const [what, change, status, code, param] of refusals) {
    it(`answers ${status} ${code} for ${what}, storing and charging nothing`, async () => {
      const tenant = await sendingTenant();
      const body = { to: TO, from: 'Dispatch', body: 'Hi', ...change };
      expectError(await call('POST', '/messages/send', { auth: tenant.key, body }), status, code, param);
      const stored = await storedFor(tenant.accountId);
      expect(stored.messages).to.have.length(0);
      expect(await balanceOf(tenant.accountId)).to.equal('10.0000');
    });
  }

  it('answers 400 route_invalid naming to when no route covers the destination', async () => {
    const tenant = await sendingTenant({ routes: [{ prefixes: ['+44'] }] });
    expectError(await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } }), 400, 'route_invalid', 'to');
  });

  it('uses the named route alone when route_id is given', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01 }, { price: 0.02 }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi', route_id: tenant.routeIds[1] } });
    expect(response.body.data.cost).to.equal(0.02);
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent.route_id).to.equal(tenant.routeIds[1]);
  });

  it('refuses an inactive route given by route_id', async () => {
    const tenant = await sendingTenant();
    await call('PATCH', `/admin/routes/${tenant.routeIds[0]}`, { auth: 'admin', body: { is_active: false } });
    expectError(
      await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi', route_id: tenant.routeIds[0] } }),
      400,
      'route_invalid',
      'route_id',
    );
  });

  for (const scope of ['global', 'account'] as const) {
    it(`refuses a number blocklisted for ${scope === 'global' ? 'every account' : 'this account'} as a hard error, storing nothing`, async () => {
      const tenant = await sendingTenant();
      const number = '+14155550177';
      const entry = await call('POST', '/admin/blocklist', {
        auth: 'admin',
        body: { number, reason: 'Opted out', ...(scope === 'account' && { account_id: tenant.accountId }) },
      });
      expect(entry.status).to.equal(201);
      try {
        expectError(
          await call('POST', '/messages/send', { auth: tenant.key, body: { to: number, from: 'Dispatch', body: 'Hi' } }),
          400,
          'recipient_blocklisted',
          'to',
        );
        expect((await storedFor(tenant.accountId)).messages).to.have.length(0);
      } finally {
        await call('DELETE', `/admin/blocklist/${encodeURIComponent(number)}${scope === 'account' ? `?account_id=${tenant.accountId}` : ''}`, {
          auth: 'admin',
        });
      }
    });
  }

  it('answers 402 and charges nothing when the balance does not cover the cost', async () => {
    const tenant = await sendingTenant({ balance: 0.005, routes: [{ price: 0.01 }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    expectError(response, 402, 'insufficient_balance');
    expect(response.body.error.details).to.deep.equal({ required: 0.01, available: 0.005, currency: 'USD' });
    expect(await storedFor(tenant.accountId)).to.deep.include({ messages: [] });
    expect(await balanceOf(tenant.accountId)).to.equal('0.0050');
  });

  it('accepts exactly k of N concurrent sends when the balance covers k, never overdrawing', async () => {
    const tenant = await sendingTenant({ balance: 0.07, routes: [{ price: 0.01, config: { outcome: 'delivered', dlr_delay_ms: 10_000 } }] });
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: `Message ${i}` } })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).to.have.length(7);
    expect(statuses.filter((s) => s === 402)).to.have.length(13);
    expect(await balanceOf(tenant.accountId)).to.equal('0.0000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('0.0000');
    expect((await storedFor(tenant.accountId)).messages).to.have.length(7);
  });

  it("answers 429 daily_limit_exceeded past the key's daily limit, with Retry-After to the end of the UTC day", async () => {
    harness.clock.set(new Date('2031-05-20T23:00:00.250Z'));
    const tenant = await sendingTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Capped', daily_limit: 2 });
    for (let i = 0; i < 2; i++)
      expect((await call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
    const refused = await call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    expectError(refused, 429, 'daily_limit_exceeded');
    // 3,599.75 seconds to midnight, rounded up.
    expect(refused.headers.get('retry-after')).to.equal('3600');
    // Another key of the account is not limited by this one.
    expect((await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
    // At midnight the key's day starts again.
    harness.clock.set(new Date('2031-05-21T00:00:00.000Z'));
    expect((await call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
  });

  it("answers 429 monthly_limit_exceeded past the key's monthly limit", async () => {
    harness.clock.set(new Date('2031-05-31T23:59:59.000Z'));
    const tenant = await sendingTenant();
    const key = await createAdminKey(tenant.accountId, { name: 'Monthly', monthly_limit: 1 });
    expect((await call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })).status).to.equal(201);
    expectError(await call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } }), 429, 'monthly_limit_exceeded');
  });

  it('accepts exactly the daily limit of 50 concurrent sends through one key, and counts none that the balance refused', async () => {
    harness.clock.set(new Date('2031-05-20T23:59:59.000Z'));
    // 0.25 covers the 20 sends and five more.
    const tenant = await sendingTenant({ balance: 0.25, routes: [{ price: 0.01 }] });
    const key = await createAdminKey(tenant.accountId, { name: 'Capped', daily_limit: 20, monthly_limit: 30 });
    const sendOne = () => call('POST', '/messages/send', { auth: key.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const statuses = (await Promise.all(Array.from({ length: 50 }, sendOne))).map((response) => response.status);
    expect([statuses.filter((status) => status === 201).length, statuses.filter((status) => status === 429).length]).to.deep.equal([20, 30]);
    expect(await harness.db('messages').where({ api_key_id: key.id }).count({ n: '*' })).to.deep.equal([{ n: 20 }]);

    const monthly = await createAdminKey(tenant.accountId, { name: 'Monthly', daily_limit: null, monthly_limit: 12 });
    const bulk = await call('POST', '/messages/bulk', {
      auth: monthly.plain_key,
      body: { from: 'Dispatch', body: 'Hi', recipients: ['bogus', ...Array.from({ length: 8 }, (_, i) => `+1415555020${i}`)] },
    });
    expect(bulk.body.data).to.include({ total: 9, sent: 5, failed: 4 });
    // A send refused for the balance rolls its count back with it.
    expectError(await call('POST', '/messages/send', { auth: monthly.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } }), 402, 'insufficient_balance');
    await call('POST', `/admin/accounts/${tenant.accountId}/credit`, { auth: 'admin', body: { amount: 1 } });
    const more = await Promise.all(
      Array.from({ length: 10 }, () => call('POST', '/messages/send', { auth: monthly.plain_key, body: { to: TO, from: 'Dispatch', body: 'Hi' } })),
    );
    expect(more.filter((response) => response.status === 201)).to.have.length(7);
    expectError(more.find((response) => response.status !== 201) as never, 429, 'monthly_limit_exceeded');
  });
});

describe('the message life', () => {
  it('fails a message the provider rejects, refunding it, with message.failed', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'rejected' } }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const failed = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', cost: 0, attempts: 1 });
    expect(failed.error).to.deep.equal({ type: 'provider_error', code: 'provider_rejected', message: 'The simulator rejects every message.' });
    expect(failed.failed_at).to.be.a('string');
    expect(await balanceOf(tenant.accountId)).to.equal('10.0000');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('10.0000');
    expect((await harness.db('events').where({ message_id: failed.id })).map((e) => e.type)).to.deep.equal(['message.failed']);
  });

  it('marks a message the carrier could not deliver undelivered, keeping the charge', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01, config: { outcome: 'undelivered', dlr_delay_ms: 20 } }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const undelivered = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'undelivered');
    expect(undelivered.error).to.include({ type: 'provider_error', code: 'undelivered' });
    expect(undelivered.cost).to.equal(0.01);
    expect(undelivered.failed_at).to.be.a('string');
    expect(await balanceOf(tenant.accountId)).to.equal('9.9900');
    const events = await harness.db('events').where({ message_id: undelivered.id }).orderBy('created_at');
    expect(events.map((e) => [e.type, e.data.status])).to.deep.equal([
      ['message.sent', 'sent'],
      ['message.failed', 'undelivered'],
    ]);
  });

  it('fails over from an unavailable route to the next, settling the price difference through the ledger', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.01, config: { outcome: 'unavailable' } }, { price: 0.03 }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    expect(response.body.data.cost).to.equal(0.01);
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'delivered');
    expect(sent).to.include({ route_id: tenant.routeIds[1], attempts: 2, cost: 0.03 });
    expect(await balanceOf(tenant.accountId)).to.equal('9.9700');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('9.9700');
    const attempts = await harness.db('message_attempts').where({ message_id: sent.id }).orderBy('id');
    expect(attempts.map((a) => [a.route_id, a.outcome])).to.deep.equal([
      [tenant.routeIds[0], 'retryable'],
      [tenant.routeIds[1], 'accepted'],
    ]);
  });

  it('refunds the excess when failover lands on a cheaper route', async () => {
    const tenant = await sendingTenant({ routes: [{ price: 0.05, config: { outcome: 'unavailable' } }, { price: 0.02 }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent.cost).to.equal(0.02);
    expect(await balanceOf(tenant.accountId)).to.equal('9.9800');
    expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('9.9800');
  });

  it('retries when every route is unavailable, then fails provider_unavailable and refunds', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'unavailable' } }, { config: { outcome: 'unavailable' } }] });
    await harness.dispatch.boss.updateQueue('send-message', { retryLimit: 1, retryDelay: 1, retryBackoff: false });
    try {
      const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
      const failed = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending', 15_000);
      expect(failed).to.include({ status: 'failed', attempts: 4, cost: 0 });
      expect(failed.error).to.include({ type: 'provider_error', code: 'provider_unavailable' });
      expect(await balanceOf(tenant.accountId)).to.equal('10.0000');
    } finally {
      // Back to the queue's own options, which every later test of the run shares.
      await harness.dispatch.boss.updateQueue(QUEUES.sendMessage.name, QUEUES.sendMessage.options);
    }
  });

  it('skips a pricier route the balance cannot cover, never overdrawing, and refunds when nothing else takes the message', async () => {
    const tenant = await sendingTenant({ balance: 0.01, routes: [{ price: 0.01, config: { outcome: 'unavailable' } }, { price: 0.05 }] });
    await harness.dispatch.boss.updateQueue('send-message', { retryLimit: 0 });
    try {
      const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
      const failed = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
      expect(failed).to.include({ status: 'failed', attempts: 1, cost: 0 });
      expect(failed.error!.message).to.match(/balance does not cover the price of route/);
      expect(await balanceOf(tenant.accountId)).to.equal('0.0100');
      expect(await ledgerSum(harness.db, tenant.accountId)).to.equal('0.0100');
    } finally {
      // Back to the queue's own options, which every later test of the run shares.
      await harness.dispatch.boss.updateQueue(QUEUES.sendMessage.name, QUEUES.sendMessage.options);
    }
  });

  it('leaves for its upstream without waiting for a polling interval: the send announces its job to the dispatchers', async () => {
    // How fast it leaves is a duration, which a loaded machine can stretch; what makes it fast is
    // not: a dispatcher listens on the jobs channel, and the send's commit announces the job there.
    const listener = new pg.Client({ connectionString: harness.database.url });
    await listener.connect();
    try {
      const {
        rows: [{ listening }],
      } = await listener.query(
        `SELECT count(*)::int AS listening FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1 AND query = $2`,
        [JOBS_CHANNEL.replaceAll('_', '-'), `LISTEN ${JOBS_CHANNEL}`],
      );
      expect(listening, 'connections listening for new jobs').to.be.at.least(1);
      const announced: string[] = [];
      listener.on('notification', (notification) => announced.push(notification.payload ?? ''));
      await listener.query(`LISTEN ${JOBS_CHANNEL}`);

      const tenant = await sendingTenant();
      const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
      await eventually(
        () => announced,
        (names) => names.includes(QUEUES.sendMessage.name),
        { what: 'an announcement naming the send queue' },
      );
      expect((await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending')).route_id).to.equal(tenant.routeIds[0]);
    } finally {
      await listener.end();
    }
  });

  it('never moves a final state back', async () => {
    const tenant = await sendingTenant({ routes: [{ config: { outcome: 'undelivered', dlr_delay_ms: 10 } }] });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const undelivered = await waitForMessage(tenant, response.body.data.id, (m) => m.status === 'undelivered');
    const { recordDeliveryReports } = await import('../../domain/message-outcomes.ts');
    await recordDeliveryReports(harness.db, jobQueueOf(harness.dispatch.boss), [
      { routeId: undelivered.route_id!, report: { providerMessageId: undelivered.provider_message_id!, status: 'delivered' } },
    ]);
    const after = await call('GET', `/messages/${undelivered.id}`, { auth: tenant.key });
    expect(after.body.data.status).to.equal('undelivered');
    expect(after.body.data.delivered_at).to.equal(null);
  });
});

describe('route assignment in sending', () => {
  it('tries routes in ascending priority', async () => {
    const tenant = await sendingTenant({ routes: [] });
    const later = await addRoute(tenant.accountId, 5, { price: 0.02 });
    const first = await addRoute(tenant.accountId, 1, { price: 0.01 });
    const response = await call('POST', '/messages/send', { auth: tenant.key, body: { to: TO, from: 'Dispatch', body: 'Hi' } });
    const sent = await waitForMessage(tenant, response.body.data.id, (m) => m.status !== 'pending');
    expect(sent.route_id).to.equal(first);
    expect(later).to.not.equal(first);
  });
});
