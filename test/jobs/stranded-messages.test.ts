import { expect } from 'chai';
import { beginSubmission } from '../../db/message-attempts.ts';
import { FakeHttpProvider } from '../support/fake-http-provider.ts';
import { sendingTenant, storeMessages, waitForMessage } from '../support/fixtures.ts';
import { quietInstance, reconcileAll } from '../support/reconcile.ts';

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

/**
 * What a process that died leaves behind, written as it would be, then handed to the reconciler
 * of the running service: a pending message with no job, perhaps with a submission in flight.
 */
describe('messages that no live job will move', () => {
  let provider: FakeHttpProvider;
  let quiet: Awaited<ReturnType<typeof quietInstance>>;
  const db = () => quiet.dispatch.db;

  before(async () => {
    quiet = await quietInstance();
  });

  after(async () => {
    await quiet?.stop();
  });

  beforeEach(async () => {
    provider = await FakeHttpProvider.start();
  });

  afterEach(async () => {
    await provider.stop();
  });

  const pendingMessage = async (tenant: Awaited<ReturnType<typeof sendingTenant>>, acceptedMinutesAgo: number) => {
    const [id] = await storeMessages(tenant, [{ status: 'pending', cost: '0.0100', created_at: minutesAgo(acceptedMinutesAgo) }], db());
    return id;
  };

  it('are given a job again and sent, when nothing was submitted yet', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: provider.url } }], baseUrl: quiet.dispatch.baseUrl });
    provider.behave({ accept: true, id: 'stranded-1' });
    const id = await pendingMessage(tenant, 2);
    expect(await reconcileAll(quiet.dispatch)).to.be.at.least(1);
    const sent = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
    expect(sent).to.include({ status: 'sent', provider_message_id: 'stranded-1', attempts: 1 });
  });

  it('are failed with provider_timeout and refunded, never submitted again, when a submission was in flight', async () => {
    const tenant = await sendingTenant({
      routes: [
        { provider: 'http', config: { url: provider.url } },
        { provider: 'http', config: { url: provider.url } },
      ],
      baseUrl: quiet.dispatch.baseUrl,
    });
    const id = await pendingMessage(tenant, 2);
    await beginSubmission(db(), id, tenant.routeIds[0]);
    await reconcileAll(quiet.dispatch);
    const failed = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', attempts: 1, cost: 0 });
    expect(failed.error!.code).to.equal('provider_timeout');
    expect(provider.requests).to.have.length(0);
    const refunds = await db()('ledger_entries').where({ message_id: id, kind: 'refund' }).pluck('amount');
    expect(refunds).to.deep.equal(['0.0100']);
    expect(await db()('message_attempts').where({ message_id: id }).pluck('outcome')).to.deep.equal(['unknown']);
  });

  it('are submitted again to the same idempotent route under the same key when a submission was in flight there', async () => {
    const other = await FakeHttpProvider.start();
    try {
      const tenant = await sendingTenant({
        routes: [
          { provider: 'http', config: { url: other.url } },
          { provider: 'http', config: { url: provider.url, idempotent: true } },
        ],
        baseUrl: quiet.dispatch.baseUrl,
      });
      provider.behave({ accept: true, id: 'again-1' });
      const id = await pendingMessage(tenant, 2);
      await beginSubmission(db(), id, tenant.routeIds[1]);
      await reconcileAll(quiet.dispatch);
      const sent = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
      expect(sent).to.include({ status: 'sent', route_id: tenant.routeIds[1], attempts: 2 });
      expect(provider.requests.map((request) => request.headers['idempotency-key'])).to.deep.equal([id]);
      expect(other.requests).to.have.length(0);
    } finally {
      await other.stop();
    }
  });

  it('fail with provider_unavailable, refunded, once the send window has passed and no route takes them', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'simulator', config: { outcome: 'unavailable' } }], baseUrl: quiet.dispatch.baseUrl });
    const id = await pendingMessage(tenant, 16);
    await reconcileAll(quiet.dispatch);
    const failed = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', cost: 0 });
    expect(failed.error!.code).to.equal('provider_unavailable');
  });

  it('fail with provider_unavailable once the send window has passed, without a submission after it', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'http', config: { url: provider.url } }], baseUrl: quiet.dispatch.baseUrl });
    provider.behave({ status: 503 });
    const id = await pendingMessage(tenant, 16);
    await reconcileAll(quiet.dispatch);
    const failed = await waitForMessage(tenant, id, (m) => m.status !== 'pending');
    expect(failed).to.include({ status: 'failed', cost: 0, attempts: 0 });
    expect(failed.error!.code).to.equal('provider_unavailable');
    expect(provider.requests).to.have.length(0);
  });

  it('are left alone while a live job still holds them', async () => {
    const tenant = await sendingTenant({ routes: [{ provider: 'simulator', config: { outcome: 'unavailable' } }], baseUrl: quiet.dispatch.baseUrl });
    const id = await pendingMessage(tenant, 2);
    await reconcileAll(quiet.dispatch);
    // The job it was given is now waiting to retry: a second sweep must not add another.
    await waitForMessage(tenant, id, (m) => m.attempts >= 1);
    await reconcileAll(quiet.dispatch);
    const jobs = await db().raw(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'send-message' AND data->'message_ids' @> to_jsonb(?::text)`, [id]);
    expect(jobs.rows[0].n).to.equal(1);
  });
});
