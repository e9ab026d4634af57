import { expect } from 'chai';
import { jobQueueOf } from '../../db/queues.ts';
import { randomBase62 } from '../../domain/ids.ts';
import { receiveInbound, recordInbound, type InboundInput } from '../../domain/inbound.ts';
import { harness } from '../support/harness.ts';
import { inboundTenant, randomHandset } from '../support/inbound.ts';

const inbound = (routeId: number, to: string, overrides: Partial<InboundInput> = {}): InboundInput => ({
  routeId,
  providerMessageId: `prov-${randomBase62(12)}`,
  from: randomHandset(),
  to,
  body: 'Hello',
  encoding: 'GSM-7',
  segments: 1,
  complete: true,
  receivedAt: new Date('2026-01-02T03:04:05.678Z'),
  ...overrides,
});

const eventsAbout = (id: string) => harness.db('events').where('data', '@>', JSON.stringify({ id }));

describe('receiveInbound', () => {
  it('stores a message once however often its provider repeats it, with one message.received', async () => {
    const tenant = await inboundTenant();
    const jobs = jobQueueOf(harness.dispatch.boss);
    const input = inbound(tenant.routeId, tenant.number, { body: 'STOP', segments: 1 });
    const outcomes = [await receiveInbound(harness.db, jobs, input), await receiveInbound(harness.db, jobs, input)];
    outcomes.push(...(await Promise.all([receiveInbound(harness.db, jobs, input), receiveInbound(harness.db, jobs, input)])));
    expect(outcomes).to.deep.equal([true, false, false, false]);

    const rows = await harness.db('inbound_messages').where({ route_id: tenant.routeId, provider_message_id: input.providerMessageId });
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ account_id: tenant.accountId, keyword: 'STOP', complete: true });
    expect(rows[0].received_at.toISOString()).to.equal('2026-01-02T03:04:05.678Z');
    expect((await eventsAbout(rows[0].id)).map((event) => event.type)).to.deep.equal(['message.received']);
    // One opt-out and one confirmation, whatever the repeats.
    expect(await harness.db('opt_out_changes').where({ account_id: tenant.accountId })).to.have.length(1);
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(1);
  });

  it("rolls back with the caller's transaction: nothing stored, no event", async () => {
    const tenant = await inboundTenant();
    const input = inbound(tenant.routeId, tenant.number);
    const failure = new Error('the caller gave up');
    const outcome = await harness.db
      .transaction(async (trx) => {
        expect(await recordInbound(trx, jobQueueOf(harness.dispatch.boss), input)).to.equal(true);
        throw failure;
      })
      .catch((error) => error);
    expect(outcome).to.equal(failure);
    expect(await harness.db('inbound_messages').where({ provider_message_id: input.providerMessageId })).to.have.length(0);
    expect(await receiveInbound(harness.db, jobQueueOf(harness.dispatch.boss), input)).to.equal(true);
  });

  it('takes no keyword from an incomplete message: its missing parts may have said more', async () => {
    const tenant = await inboundTenant();
    const input = inbound(tenant.routeId, tenant.number, { body: 'STOP', segments: 1, complete: false });
    await receiveInbound(harness.db, jobQueueOf(harness.dispatch.boss), input);
    expect(await harness.db('inbound_messages').where({ provider_message_id: input.providerMessageId }).first()).to.include({ keyword: null, complete: false });
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId })).to.have.length(0);
  });

  it('logs a keyword reply it could not send, once, and keeps the message and the opt-out', async () => {
    const tenant = await inboundTenant({ balance: 0 });
    const warnings: { details: Record<string, unknown>; message: string }[] = [];
    const input = inbound(tenant.routeId, tenant.number, { body: 'Stop' });
    expect(
      await receiveInbound(harness.db, jobQueueOf(harness.dispatch.boss), input, { warn: (details, message) => warnings.push({ details, message }) }),
    ).to.equal(true);

    const stored = await harness.db('inbound_messages').where({ provider_message_id: input.providerMessageId }).first();
    expect(
      warnings.map(({ details, message }) => [message, details.account_id, details.inbound_message_id, details.to, (details.err as { code: string }).code]),
    ).to.deep.equal([['keyword auto-reply not sent', tenant.accountId, stored.id, input.from, 'insufficient_balance']]);
    expect(await harness.db('opt_outs').where({ account_id: tenant.accountId, number: input.from })).to.have.length(1);
    expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.have.length(0);
  });

  it('stores a Latin-1 message as given', async () => {
    const tenant = await inboundTenant();
    const input = inbound(tenant.routeId, tenant.number, { body: 'Très bien, à demain', encoding: 'Latin-1' });
    await receiveInbound(harness.db, jobQueueOf(harness.dispatch.boss), input);
    expect(await harness.db('inbound_messages').where({ provider_message_id: input.providerMessageId }).first()).to.include({
      encoding: 'Latin-1',
      body: 'Très bien, à demain',
    });
  });
});
