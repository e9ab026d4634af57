import { expect } from 'chai';
import { findAccount } from '../../db/accounts.ts';
import { jobQueueOf } from '../../db/queues.ts';
import { optOut } from '../../domain/opt-outs.ts';
import { acceptMessage } from '../../domain/sending.ts';
import { call } from '../support/client.ts';
import { eventually, sendingTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

const TO = '+447911123456';
const PRICE = 0.01;

/** Backends of this test database waiting for an advisory lock: how a test sees that the database, not the process, holds one back. */
async function advisoryWaiters(): Promise<number> {
  const result = await harness.db.raw(
    "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
  );
  return result.rows[0].n;
}

const send = (key: string, index: number) => call('POST', '/messages/send', { auth: key, body: { to: TO, from: 'Dispatch', body: `Offer ${index}` } });

describe('sends racing an opt-out of their recipient', () => {
  it('50 concurrent sends and an opt-out: every accepted send committed before the opt-out, every other answered 400 recipient_opted_out and charged nothing', async function () {
    this.timeout(60_000);
    const tenant = await sendingTenant({ balance: 10, routes: [{ price: PRICE }] });
    // The opt-out is started amid the sends, so that some pass before it and some come after.
    const sends: ReturnType<typeof send>[] = [];
    for (let index = 0; index < 25; index += 1) sends.push(send(tenant.key, index));
    const optingOut = call('POST', '/opt-outs/create', { auth: tenant.key, body: { numbers: [TO] } });
    for (let index = 25; index < 50; index += 1) sends.push(send(tenant.key, index));
    const answers = await Promise.all(sends);
    expect((await optingOut).body.data.added).to.equal(1);

    const accepted = answers.filter((answer) => answer.status === 201);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(accepted.length + refused.length).to.equal(50);
    for (const answer of refused) expect(answer.body.error, JSON.stringify(answer.body)).to.include({ code: 'recipient_opted_out', param: 'to' });

    // created_at is clock_timestamp() at the insert: a message's is taken under its send's shared
    // lock, the opt-out's once its exclusive lock was granted, that is after every such send ended.
    const { created_at: optedOutAt } = await harness.db('opt_outs').where({ account_id: tenant.accountId, number: TO }).first();
    const messages = await harness.db('messages').where({ account_id: tenant.accountId }).select('id', 'created_at');
    expect(messages.map((message) => message.id)).to.have.members(accepted.map((answer) => answer.body.data.id));
    for (const message of messages) expect(message.created_at.getTime(), message.id).to.be.below(optedOutAt.getTime());

    const debits = await harness.db('ledger_entries').where({ account_id: tenant.accountId, kind: 'debit' });
    expect(debits.map((entry) => entry.message_id)).to.have.members(accepted.map((answer) => answer.body.data.id));
    const { balance } = await harness.db('accounts').where({ id: tenant.accountId }).first();
    expect(Number(balance)).to.be.closeTo(10 - PRICE * accepted.length, 1e-9);
  });

  it('an opt-out waits in the database for a send that passed its check until that send commits', async () => {
    const tenant = await sendingTenant();
    const jobs = jobQueueOf(harness.dispatch.boss);
    const account = (await findAccount(harness.db, tenant.accountId))!;
    const sending = await harness.db.transaction();
    let optOutDone = false;
    try {
      const message = await acceptMessage(sending, jobs, { account, apiKey: null }, { to: TO, from: 'Dispatch', body: 'Checked before the opt-out' });
      const optingOut = harness.db
        .transaction((trx) => optOut(trx, jobs, tenant.accountId, TO, { source: 'api' }))
        .then((changed) => {
          optOutDone = true;
          return changed;
        });
      await eventually(advisoryWaiters, (n) => n === 1, { what: 'the opt-out waiting for the lock' });
      expect(optOutDone).to.equal(false);
      await sending.commit();
      expect(await optingOut).to.equal(true);

      const { created_at: optedOutAt } = await harness.db('opt_outs').where({ account_id: tenant.accountId, number: TO }).first();
      expect(message.created_at.getTime()).to.be.below(optedOutAt.getTime());
    } finally {
      if (!sending.isCompleted()) await sending.rollback();
    }
  });

  it('a send waits in the database for an opt-out being written, then is refused', async () => {
    const tenant = await sendingTenant();
    const jobs = jobQueueOf(harness.dispatch.boss);
    const optingOut = await harness.db.transaction();
    try {
      expect(await optOut(optingOut, jobs, tenant.accountId, TO, { source: 'api' })).to.equal(true);
      const sent = send(tenant.key, 0);
      await eventually(advisoryWaiters, (n) => n === 1, { what: 'the send waiting for the lock' });
      await optingOut.commit();
      const answer = await sent;
      expect(answer.status).to.equal(400);
      expect(answer.body.error).to.include({ code: 'recipient_opted_out', param: 'to' });
      expect(await harness.db('messages').where({ account_id: tenant.accountId })).to.deep.equal([]);
    } finally {
      if (!optingOut.isCompleted()) await optingOut.rollback();
    }
  });
});
