import { expect } from 'chai';
import { runPrepared, sideBySide } from '../../db/statements.ts';
import { harness } from '../support/harness.ts';

describe("the pools' pipelining connections", () => {
  it('are connections of the driver in pipeline mode', async () => {
    const connection = await harness.db.client.acquireConnection();
    try {
      expect(connection.pipeline).to.equal(true);
    } finally {
      await harness.db.client.releaseConnection(connection);
    }
  });

  it('answer statements issued side by side in a transaction in order, and fail those behind a failed one, so nothing of it commits', async () => {
    await harness.db.raw('DROP TABLE IF EXISTS pipelined_probe');
    await harness.db.raw('CREATE TABLE pipelined_probe (n integer PRIMARY KEY)');
    const outcomes = await harness.db
      .transaction(async (trx) => {
        const settled = await Promise.allSettled([
          runPrepared(trx, { text: 'INSERT INTO pipelined_probe (n) VALUES (1) RETURNING n' }),
          runPrepared(trx, { text: 'INSERT INTO pipelined_probe (n) VALUES (1) RETURNING n' }),
          runPrepared(trx, { text: 'INSERT INTO pipelined_probe (n) VALUES (2) RETURNING n' }),
        ]);
        throw Object.assign(new Error('roll back'), { settled });
      })
      .catch((error: { settled: PromiseSettledResult<{ n: number }[]>[] }) => error.settled);
    expect(outcomes.map((outcome) => outcome.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected']);
    expect((outcomes[0] as PromiseFulfilledResult<{ n: number }[]>).value).to.deep.equal([{ n: 1 }]);
    expect((outcomes[1] as PromiseRejectedResult).reason).to.include({ code: '23505' });
    expect((outcomes[2] as PromiseRejectedResult).reason).to.include({ code: '25P02' });
    expect(await harness.db('pipelined_probe').count('* as n').first()).to.deep.equal({ n: 0 });
    await harness.db.raw('DROP TABLE pipelined_probe');
  });

  it('roll a transaction back, through sideBySide, only once every statement issued side by side has answered, so a late one cannot run outside it', async () => {
    await harness.db.raw('DROP TABLE IF EXISTS pipelined_probe');
    await harness.db.raw('CREATE TABLE pipelined_probe (n integer PRIMARY KEY)');
    let late: PromiseSettledResult<{ n: number }[]> | undefined;
    const failure = await harness.db
      .transaction(async (trx) => {
        const failing = runPrepared(trx, { text: 'SELECT 1 / 0' });
        // Issued only after its neighbour failed and a turn of the event loop has passed, as
        // pg-boss's insert can be when it reads its queue's settings first.
        const issuedLate = failing
          .catch(() => new Promise((resolve) => setImmediate(resolve)))
          .then(() => runPrepared<{ n: number }>(trx, { text: 'INSERT INTO pipelined_probe (n) VALUES (3) RETURNING n' }));
        void issuedLate.then(
          (value) => (late = { status: 'fulfilled', value }),
          (reason: unknown) => (late = { status: 'rejected', reason }),
        );
        await sideBySide([failing, issuedLate]);
      })
      .catch((error: unknown) => error);
    expect(failure).to.include({ code: '22012' });
    // Refused by the transaction that failed: it ran inside it, not after its rollback.
    expect(late?.status).to.equal('rejected');
    expect((late as PromiseRejectedResult).reason).to.include({ code: '25P02' });
    const { rows } = await harness.db.raw('SELECT n FROM pipelined_probe');
    expect(rows).to.deep.equal([]);
    await harness.db.raw('DROP TABLE pipelined_probe');
  });
});
