import { expect } from 'chai';
import { lockProviderMessage, lockProviderMessagesThen } from '../../db/early-reports.ts';
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
    await lockProviderMessage(holder, routeId, upstreamId);
    await holder('messages').where({ id }).update({ status: 'sent', route_id: routeId, provider_message_id: upstreamId });

    const reading = harness.db.transaction((trx) =>
      lockProviderMessagesThen<MessageByUpstreamId>(trx, [{ routeId, providerMessageId: upstreamId }], messagesByProviderIdsLocked([{ routeId, providerMessageId: upstreamId }])),
    );
    await eventually(
      async () => (await harness.db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'advisory'`)).rows[0].n,
      (waiting: number) => waiting === 1,
      { what: 'the read to wait on the lock' },
    );
    await holder.commit();

    // Read before the lock was taken, it would have found no message with this upstream id.
    const found = await reading;
    expect(found.map((row) => [row.id, row.status, row.upstream_id_is_part])).to.deep.equal([[id, 'sent', false]]);
  });
});
