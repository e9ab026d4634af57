import { expect } from 'chai';
import { lockProviderMessagesThen } from '../../db/early-reports.ts';
import { messagesByProviderIdsLocked, type MessageByUpstreamId } from '../../db/messages.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { eventually, sendingTenant, storeMessages } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('a read written behind the locks on upstream ids', () => {
  it('runs once the locks are held, and sees what their holder committed meanwhile', async () => {
    const tenant = await sendingTenant();
    const routeId = tenant.routeIds[0];
    const [id] = await storeMessages(tenant, [{ status: 'pending' }]);
    const upstreamId = `up-${randomBase62(12)}`;

    // The submit response of the message holds the lock on its upstream id while it records it.
    const holder = await harness.db.transaction();
    await lockProviderMessagesThen(holder, [{ routeId, providerMessageId: upstreamId }], { text: 'SELECT 1' });
    await holder('messages').where({ id }).update({ status: 'sent', route_id: routeId, provider_message_id: upstreamId });

    const reading = harness.db.transaction((trx) =>
      lockProviderMessagesThen<MessageByUpstreamId>(
        trx,
        [{ routeId, providerMessageId: upstreamId }],
        messagesByProviderIdsLocked([{ routeId, providerMessageId: upstreamId }]),
      ),
    );
    // Waiting on this upstream id's lock alone (a bigint advisory lock shows as its two halves).
    const waitingOnIt = `SELECT count(*)::int AS n FROM pg_locks l, (SELECT hashtextextended(?, 0) AS h) k
      WHERE l.locktype = 'advisory' AND NOT l.granted AND l.classid::bigint = (k.h >> 32) & 4294967295 AND l.objid::bigint = k.h & 4294967295`;
    await eventually(
      async () => (await harness.db.raw(waitingOnIt, [`${routeId}:${upstreamId}`])).rows[0].n,
      (waiting: number) => waiting === 1,
      {
        what: 'the read to wait on the lock',
      },
    );
    await holder.commit();

    // Read before the lock was taken, it would have found no message with this upstream id.
    const found = await reading;
    expect(found.map((row) => [row.id, row.status, row.upstream_id_is_part])).to.deep.equal([[id, 'sent', false]]);
  });
});
