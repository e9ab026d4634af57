import { expect } from 'chai';
import { insertEventsFindingEndpoints } from '../../db/events.ts';
import { insertEndpoint } from '../../db/webhooks.ts';
import { newId, randomBase62 } from '../../domain/ids.ts';
import { createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const endpoint = (accountId: string, events = ['*']) =>
  insertEndpoint(harness.db, {
    id: newId('whe'),
    account_id: accountId,
    url: 'https://example.com/hook',
    description: null,
    events,
    signing_secret: `whsec_${randomBase62(43)}`,
  });

const event = (accountId: string) => ({ id: newId('evt'), account_id: accountId, type: 'message.sent' as const, message_id: null, data: { object: 'test' } });

describe('recording events with the endpoints to fan them out to', () => {
  it('answers the inserted events and, from the same statement, the active endpoints of their accounts alone', async () => {
    const [a, b, other] = await Promise.all([createTenant(), createTenant(), createTenant()]);
    const activeOfA = await endpoint(a.accountId, ['message.sent']);
    const prompt = await endpoint(a.accountId);
    const promptSince = new Date('2026-11-01T10:00:00.123Z');
    await harness.db('webhook_endpoints').where({ id: prompt.id }).update({ prompt_since: promptSince });
    const disabled = await endpoint(a.accountId);
    await harness.db('webhook_endpoints').where({ id: disabled.id }).update({ is_active: false });
    const deleted = await endpoint(a.accountId);
    await harness.db('webhook_endpoints').where({ id: deleted.id }).update({ is_active: false, deleted_at: new Date() });
    const activeOfB = await endpoint(b.accountId);
    await endpoint(other.accountId);

    const given = [event(a.accountId), event(b.accountId), event(a.accountId)];
    const { events, endpoints } = await harness.db.transaction((trx) => insertEventsFindingEndpoints(trx, given));

    expect(events.map((row) => row.id).sort()).to.deep.equal(given.map((row) => row.id).sort());
    expect(events.every((row) => row.created_at instanceof Date && !('endpoints' in row))).to.equal(true);
    expect(
      await harness
        .db('events')
        .whereIn(
          'id',
          given.map((row) => row.id),
        )
        .count('* as n')
        .first(),
    ).to.deep.equal({ n: 3 });
    const byId = new Map(endpoints.map((found) => [found.id, found]));
    expect([...byId.keys()].sort()).to.deep.equal([activeOfA.id, prompt.id, activeOfB.id].sort());
    expect(byId.get(activeOfA.id)).to.deep.equal({
      id: activeOfA.id,
      account_id: a.accountId,
      events: ['message.sent'],
      prompt_since: null,
      last_success_at: null,
      last_failure_at: null,
    });
    expect(byId.get(prompt.id)?.prompt_since?.toISOString()).to.equal(promptSince.toISOString());
  });

  it('answers no endpoints for accounts without any, and nothing for no events', async () => {
    const tenant = await createTenant();
    const { events, endpoints } = await harness.db.transaction((trx) => insertEventsFindingEndpoints(trx, [event(tenant.accountId)]));
    expect(events).to.have.length(1);
    expect(endpoints).to.deep.equal([]);
    expect(await insertEventsFindingEndpoints(harness.db, [])).to.deep.equal({ events: [], endpoints: [] });
  });
});
