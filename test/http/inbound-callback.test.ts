import { expect } from 'chai';
import { verifySignature } from '../../sdk/webhook-signature.ts';
import { call, type AnswerBody } from '../support/client.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset, type InboundTenant } from '../support/inbound.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

async function post(url: string, body: unknown): Promise<{ status: number; body: AnswerBody<{ received: boolean; repeat: boolean }> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as AnswerBody<{ received: boolean; repeat: boolean }> };
}

/** A tenant with an HTTP route, and the inbound URL the operator reads off the route to give its provider. */
async function httpTenant(): Promise<InboundTenant & { inboundUrl: string }> {
  const tenant = await inboundTenant({ routes: [{ provider: 'http', config: { url: 'http://127.0.0.1:9/sms' } }] });
  const route = await call('GET', `/admin/routes/${tenant.routeId}`, { auth: 'admin' });
  const { dlr_token: token } = await harness.db('routes').where({ id: tenant.routeId }).first();
  expect(route.body.data.inbound_url).to.equal(`${harness.baseUrl.replace(/\/api\/v1$/, '')}/callbacks/inbound/${token}`);
  return { ...tenant, inboundUrl: route.body.data.inbound_url! };
}

describe('POST /callbacks/inbound/<route token> (HTTP providers)', () => {
  it('stores the message, lists it for the account that holds the number, and emits one message.received, delivered signed', async () => {
    const tenant = await httpTenant();
    const receiver = await WebhookReceiver.start();
    try {
      const endpoint = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, events: ['message.received'] } });
      expect(endpoint.status, JSON.stringify(endpoint.body)).to.equal(201);
      const from = randomHandset();
      const answer = await post(tenant.inboundUrl, {
        id: 'up-1',
        from,
        to: tenant.number,
        body: 'Can we move it to 3pm? Ünïcode ✓',
        timestamp: '2026-01-02T03:04:05Z',
      });
      expect(answer.status, JSON.stringify(answer.body)).to.equal(200);
      expect(answer.body).to.deep.include({ success: true, data: { received: true, repeat: false } });

      const listed = await call('GET', '/inbound-messages', { auth: tenant.key });
      expect(listed.body.data).to.have.length(1);
      expect(listed.body.data[0]).to.deep.include({
        object: 'inbound_message',
        from,
        to: tenant.number,
        body: 'Can we move it to 3pm? Ünïcode ✓',
        encoding: 'UCS-2',
        segments: 1,
        complete: true,
        keyword: null,
        route_id: tenant.routeId,
        received_at: '2026-01-02T03:04:05.000Z',
      });

      await receiver.waitFor((received) => received.length >= 1);
      const [delivery] = receiver.received;
      verifySignature(delivery.rawBody, delivery.headers['dispatch-signature'] as string, endpoint.body.data.signing_secret);
      expect(delivery.event).to.deep.include({ type: 'message.received', data: listed.body.data[0] });
      const events = await harness.db('events').where('data', '@>', JSON.stringify({ id: listed.body.data[0].id }));
      expect(events.map((event) => [event.id, event.type])).to.deep.equal([[delivery.event.id, 'message.received']]);
    } finally {
      await receiver.stop();
    }
  });

  it('stores a repeated post once, with one event, and answers 200 to each', async () => {
    const tenant = await httpTenant();
    const message = { id: 'up-repeat', from: randomHandset().slice(1), to: tenant.number, body: 'Hello there' };
    const answers = [await post(tenant.inboundUrl, message), ...(await Promise.all([post(tenant.inboundUrl, message), post(tenant.inboundUrl, message)]))];
    expect(answers.map((answer) => answer.status)).to.deep.equal([200, 200, 200]);
    expect(answers.map((answer) => answer.body.data.repeat)).to.deep.equal([false, true, true]);
    const stored = await harness.db('inbound_messages').where({ route_id: tenant.routeId });
    expect(stored).to.have.length(1);
    expect(stored[0]).to.include({ from: `+${message.from}`, encoding: 'GSM-7', provider_message_id: 'up-repeat' });
    expect(await harness.db('events').where('data', '@>', JSON.stringify({ id: stored[0].id }))).to.have.length(1);
  });

  it('answers 400 naming the field of a bad body, and stores nothing', async () => {
    const tenant = await httpTenant();
    for (const [body, param] of [
      [{ from: randomHandset(), to: tenant.number, body: 'Hi' }, 'id'],
      [{ id: 'x', to: tenant.number, body: 'Hi' }, 'from'],
      [{ id: 'x', from: randomHandset(), to: 'not a number!', body: 'Hi' }, 'to'],
      [{ id: 'x', from: randomHandset(), to: tenant.number, body: 42 }, 'body'],
      [['not', 'an', 'object'], 'body'],
    ] as const) {
      const answer = await post(tenant.inboundUrl, body);
      expect(answer.status, JSON.stringify(body)).to.equal(400);
      expect(answer.body).to.deep.include({ success: false });
      expect(answer.body.error).to.include({ type: 'invalid_request_error', param });
    }
    expect(await harness.db('inbound_messages').where({ route_id: tenant.routeId })).to.have.length(0);
  });

  it('answers 400 naming the field that holds a NUL or a lone surrogate, and stores nothing', async () => {
    const tenant = await httpTenant();
    for (const [field, text] of [
      ['id', 'up\u0000nul'],
      ['body', 'half \ud800 of a pair'],
      ['id', '\udfff'],
      ['body', 'Hi\u0000'],
    ] as const) {
      const body = { id: 'up-hostile', from: randomHandset(), to: tenant.number, body: 'Hi', [field]: text };
      const answer = await post(tenant.inboundUrl, body);
      expect(answer.status, `${field}: ${JSON.stringify(text)}`).to.equal(400);
      expect(answer.body.error).to.include({ type: 'invalid_request_error', param: field });
    }
    expect(await harness.db('inbound_messages').where({ route_id: tenant.routeId })).to.have.length(0);
  });

  it('answers 404 for a token no HTTP route has, and shows no inbound URL on other routes', async () => {
    const tenant = await httpTenant();
    const answer = await post(tenant.inboundUrl.replace(/[^/]+$/, 'x'.repeat(32)), { id: 'x', from: randomHandset(), to: randomHandset(), body: 'Hi' });
    expect(answer.status).to.equal(404);
    expect(answer.body.error).to.include({ code: 'not_found' });
    const simulator = await call('POST', '/admin/routes', {
      auth: 'admin',
      body: { name: `sim-${Date.now()}`, provider: 'simulator', config: { outcome: 'delivered' }, price_per_segment: 0.01 },
    });
    expect(simulator.body.data).to.not.have.property('inbound_url');
  });
});
