import { expect } from 'chai';
import { beginSubmissions, settleSubmission } from '../../db/message-attempts.ts';
import { findMessagesToSubmit, markMessagesSent, moveMessageStatus } from '../../db/messages.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { sendingTenant, storeMessages } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('a message counts each submission once, when it is settled', () => {
  const outcomes = (ids: string[]) => harness.db('message_attempts').whereIn('message_id', ids).orderBy('id').pluck('outcome');
  // Every message these tests begin is pending, so each is begun.
  const begin = async (submissions: { messageId: string; routeId: number }[]) => (await beginSubmissions(harness.db, submissions)) as number[];
  const rows = (ids: string[]) => harness.db('messages').whereIn('id', ids).orderBy('id').select('id', 'status', 'attempts');

  it('begins submissions without writing the message, which the send worker reads as submitted', async () => {
    const tenant = await sendingTenant();
    const [offered, untouched] = await storeMessages(tenant, [{ status: 'pending' }, { status: 'pending' }]);
    await beginSubmissions(harness.db, [{ messageId: offered, routeId: tenant.routeIds[0] }]);
    const read = new Map((await findMessagesToSubmit(harness.db, [offered, untouched])).map((message) => [message.id, message]));
    expect(read.get(offered)).to.include({ attempts: 0, submitted: true, status: 'pending' });
    expect(read.get(untouched)).to.include({ attempts: 0, submitted: false, status: 'pending' });
  });

  it('begins no submission of a message that is no longer pending (canceled or failed meanwhile)', async () => {
    const tenant = await sendingTenant();
    const [pending, failed] = await storeMessages(tenant, [{ status: 'pending' }, { status: 'failed' }]);
    const [begun, notBegun] = await beginSubmissions(harness.db, [
      { messageId: pending, routeId: tenant.routeIds[0] },
      { messageId: failed, routeId: tenant.routeIds[0] },
    ]);
    expect(begun).to.be.a('number');
    expect(notBegun).to.equal(undefined);
    expect(await outcomes([pending, failed])).to.deep.equal(['submitting']);
  });

  it('moves pending messages to sent, settling their submissions as accepted and counting each once', async () => {
    const tenant = await sendingTenant();
    const ids = (await storeMessages(tenant, [{ status: 'pending' }, { status: 'pending' }])).sort();
    const attemptIds = await begin(ids.map((messageId) => ({ messageId, routeId: tenant.routeIds[0] })));
    const sent = await markMessagesSent(
      harness.db,
      ids.map((id, index) => ({
        id,
        route_id: tenant.routeIds[0],
        provider_message_id: `up-${randomBase62(10)}`,
        attempt_id: attemptIds[index],
        duration_ms: 12.4,
      })),
    );
    expect(sent.map((message) => message.id).sort()).to.deep.equal(ids);
    expect(await rows(ids)).to.deep.equal(ids.map((id) => ({ id, status: 'sent', attempts: 1 })));
    expect(await outcomes(ids)).to.deep.equal(['accepted', 'accepted']);
    expect(await harness.db('message_attempts').whereIn('id', attemptIds).pluck('duration_ms')).to.deep.equal([12, 12]);
  });

  it('does not count again a submission that a later try already settled', async () => {
    const tenant = await sendingTenant();
    const [id] = await storeMessages(tenant, [{ status: 'pending' }]);
    const [attemptId] = await begin([{ messageId: id, routeId: tenant.routeIds[0] }]);
    // A later try took the process for dead and settled its submission as unknown.
    expect(await settleSubmission(harness.db, attemptId, { outcome: 'unknown', errorCode: 'provider_timeout' })).to.equal(true);
    expect(await rows([id])).to.deep.equal([{ id, status: 'pending', attempts: 1 }]);
    // The upstream's acceptance arrives after all: the message is sent, its count stands.
    await markMessagesSent(harness.db, [
      { id, route_id: tenant.routeIds[0], provider_message_id: `up-${randomBase62(10)}`, attempt_id: attemptId, duration_ms: 5 },
    ]);
    expect(await rows([id])).to.deep.equal([{ id, status: 'sent', attempts: 1 }]);
    expect(await outcomes([id])).to.deep.equal(['unknown']);
  });

  it('leaves a message no longer pending, and its submission, to another settlement', async () => {
    const tenant = await sendingTenant();
    const [id] = await storeMessages(tenant, [{ status: 'pending' }]);
    const [attemptId] = await begin([{ messageId: id, routeId: tenant.routeIds[0] }]);
    // Failed meanwhile (a later try gave up on it) while this submission was in flight.
    await moveMessageStatus(harness.db, id, 'pending', 'failed', {});
    expect(
      await markMessagesSent(harness.db, [
        { id, route_id: tenant.routeIds[0], provider_message_id: `up-${randomBase62(10)}`, attempt_id: attemptId, duration_ms: 5 },
      ]),
    ).to.deep.equal([]);
    expect(await outcomes([id])).to.deep.equal(['submitting']);
    // Settled on its own, the submission is counted once, and only once however often it is settled.
    expect(await settleSubmission(harness.db, attemptId, { outcome: 'accepted', durationMs: 5 })).to.equal(true);
    expect(await settleSubmission(harness.db, attemptId, { outcome: 'accepted', durationMs: 5 })).to.equal(false);
    expect(await rows([id])).to.deep.equal([{ id, status: 'failed', attempts: 1 }]);
  });
});
