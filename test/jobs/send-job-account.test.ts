import { expect } from 'chai';
import { QUEUES } from '../../db/queues.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { sendingTenant, storeMessages, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

/**
 * A send job names the account of its messages so that the worker reads the account beside them
 * (db/send-groups.ts). The message's own account decides, whatever a job says.
 */
describe('a send job that names an account', () => {
  let own: FakeHttpProvider;
  let other: FakeHttpProvider;

  beforeEach(async () => {
    [own, other] = await Promise.all([FakeHttpProvider.start(), FakeHttpProvider.start()]);
  });

  afterEach(async () => {
    await Promise.all([own.stop(), other.stop()]);
  });

  it("sends each message over its own account's routes when the job names another account", async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: own.url } }] });
    const stranger = await sendingTenant({ routes: [{ provider: 'http', config: { url: other.url } }] });
    own.behave({ accept: true, id: 'own-route-1' });
    other.behave({ accept: true, id: 'other-route-1' });
    const [id] = await storeMessages(tenant, [{ status: 'pending', cost: '0.0100' }]);
    await harness.dispatch.boss.send(QUEUES.sendMessage.name, { message_ids: [id], account_id: stranger.accountId });
    const sent = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', provider_message_id: 'own-route-1', route_id: tenant.routeIds[0] });
    expect(other.requests).to.have.length(0);
  });
});
