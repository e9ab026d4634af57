import { expect } from 'chai';
import { runPrepared } from '../../db/batching.ts';
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
});
