import { expect } from 'chai';
import { verifyWebhook } from '../../sdk/index.ts';
import type { Page, Schemas } from '../support/client.ts';
import { createTenant, type Tenant } from '../support/fixtures.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { cli, cliJson } from './run-cli.ts';

// dispatch webhooks through the SDK, against the live Dispatch of the run.

describe('dispatch webhooks', function () {
  // Every test here starts Node processes, each a second or more on a busy two-core machine.
  this.timeout(60_000);

  let tenant: Tenant;
  let receiver: WebhookReceiver;
  before(async () => {
    tenant = await createTenant();
    receiver = await WebhookReceiver.start();
  });
  after(() => receiver.stop());

  it('create prints the secret once, list shows the endpoint, test delivers a signed test event, attempts lists it', async () => {
    const created = await cli(['webhooks', 'create', receiver.url, '--events', 'message.failed,message.delivered', '--description', 'CLI'], {
      apiKey: tenant.key,
    });
    expect(created.code, created.stderr).to.equal(0);
    const id = /whe_[0-9A-Za-z]{24}/.exec(created.stdout)?.[0];
    const secret = /whsec_[0-9A-Za-z]{43}/.exec(created.stdout)?.[0];
    expect(id, created.stdout).to.be.a('string');
    expect(secret, created.stdout).to.be.a('string');
    expect(created.stdout).to.include('never shown again');

    const listed = await cli(['webhooks', 'list'], { apiKey: tenant.key });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(listed.stdout).to.include(id!).and.include(receiver.url).and.include('message.failed, message.delivered');
    expect(listed.stdout).to.not.include(secret!);

    const event = await cliJson<Schemas['WebhookTestEvent']>(['webhooks', 'test', id!], { apiKey: tenant.key });
    expect(event).to.deep.include({ object: 'event', type: 'webhook.test', data: { object: 'webhook_test', endpoint_id: id } });
    await receiver.waitFor((received) => received.some((delivery) => delivery.event.id === event.id));
    const delivery = receiver.received.find((d) => d.event.id === event.id)!;
    expect(verifyWebhook(delivery.rawBody, String(delivery.headers['dispatch-signature']), secret!).id).to.equal(event.id);

    const attempts = await cliJson<Page<Schemas['WebhookAttempt']>>(['webhooks', 'attempts', id!, '--event', event.id, '--outcome', 'ok'], {
      apiKey: tenant.key,
    });
    expect(attempts.data.map((a) => [a.event_id, a.attempt, a.succeeded])).to.deep.equal([[event.id, 1, true]]);
    expect(attempts.pagination).to.include({ page: 1, total: 1 });
    const human = await cli(['webhooks', 'attempts', id!], { apiKey: tenant.key });
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.include(event.id).and.include('Page 1 of 1 (1 delivery attempt)');
    expect((await cli(['webhooks', 'attempts', id!, '--outcome', 'failed'], { apiKey: tenant.key })).stdout).to.equal('No delivery attempts.\n');
  });

  it('resend queues an event again for an endpoint, which receives it once more', async () => {
    const created = await cliJson<Schemas['WebhookEndpointWithSecret']>(['webhooks', 'create', receiver.url], { apiKey: tenant.key });
    const event = await cliJson<Schemas['WebhookTestEvent']>(['webhooks', 'test', created.id], { apiKey: tenant.key });
    const ofEvent = () => receiver.received.filter((delivery) => delivery.event.id === event.id);
    await receiver.waitFor(() => ofEvent().length === 1);

    const resent = await cli(['webhooks', 'resend', created.id, event.id], { apiKey: tenant.key });
    expect(resent.code, resent.stderr).to.equal(0);
    expect(resent.stdout).to.include(`Queued webhook.test event ${event.id} for ${created.id}`);
    await receiver.waitFor(() => ofEvent().length === 2);

    const unknown = await cli(['webhooks', 'resend', created.id, 'evt_000000000000000000000000'], { apiKey: tenant.key });
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('resource_not_found');
  });

  it('rotate prints a new secret and how long the old one stays valid; --expires-in 0 ends it now', async () => {
    const endpoint = await cliJson<Schemas['WebhookEndpointWithSecret']>(['webhooks', 'create', receiver.url], { apiKey: tenant.key });
    const before = Date.now();
    const rotated = await cliJson<Schemas['RotatedWebhookEndpoint']>(['webhooks', 'rotate', endpoint.id, '--expires-in', '600'], { apiKey: tenant.key });
    const after = Date.now();
    expect(rotated.signing_secret)
      .to.match(/^whsec_/)
      .and.not.equal(endpoint.signing_secret);
    // 600 s from the moment of the rotation, which lies between the command's start and its end.
    expect(Date.parse(rotated.previous_secret_expires_at!)).to.be.within(before + 600_000, after + 600_000);
    const ended = await cli(['webhooks', 'rotate', endpoint.id, '--expires-in', '0'], { apiKey: tenant.key });
    expect(ended.code, ended.stderr).to.equal(0);
    expect(ended.stdout)
      .to.match(/signing secret\s+whsec_[0-9A-Za-z]{43}\n/)
      .and.match(/old secret valid until\s+no longer valid/);
  });

  it('exits 2 for a grace period over a week and 1 for an unknown endpoint', async () => {
    const usage = await cli(['webhooks', 'rotate', 'whe_000000000000000000000000', '--expires-in', '604801'], { apiKey: tenant.key });
    expect(usage.code).to.equal(2);
    const unknown = await cli(['webhooks', 'test', 'whe_000000000000000000000000'], { apiKey: tenant.key });
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.include('resource_not_found');
  });
});
