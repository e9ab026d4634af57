import { expect } from 'chai';
import { call } from './client.ts';
import type { Tenant } from './fixtures.ts';
import { WebhookReceiver, type Answer } from './webhook-receiver.ts';

const receivers: WebhookReceiver[] = [];

/** Stops the receivers `endpointAt` started; a file that uses it calls this after each test. */
export async function stopReceivers(): Promise<void> {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.stop()));
}

/** An endpoint of the tenant at a new local receiver, with its signing secret. */
export async function endpointAt(tenant: Tenant, answer: Answer | ((index: number) => Answer) = 200, events?: string[]) {
  const receiver = await WebhookReceiver.start();
  receivers.push(receiver);
  receiver.answerWith(answer);
  const created = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url, ...(events && { events }) } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { receiver, id: created.body.data.id, secret: created.body.data.signing_secret };
}

/** A webhook.test event of the endpoint's account, queued for it; answers the event's id. */
export async function testEvent(tenant: Tenant, endpointId: string): Promise<string> {
  const response = await call('POST', `/webhooks/${endpointId}/test`, { auth: tenant.key });
  expect(response.status, JSON.stringify(response.body)).to.equal(202);
  return response.body.data.id;
}
