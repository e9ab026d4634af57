import { expect } from 'chai';
import { call } from '../support/client.ts';
import { eventually, sendingTenant, waitForMessage } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe('send jobs that finish together', () => {
  it('are each completed once, without a retry', async () => {
    // Two accounts' sends at once: their jobs are separate, run side by side, and finish together.
    const tenants = await Promise.all([sendingTenant(), sendingTenant()]);
    const sends = await Promise.all(
      tenants.flatMap((tenant) =>
        Array.from({ length: 6 }, async (_, index) => {
          const response = await call('POST', '/messages/send', {
            auth: tenant.key,
            body: { to: '+14155550123', from: 'Dispatch', body: `Completion ${index}` },
          });
          expect(response.status).to.equal(201);
          return { tenant, id: response.body.data.id };
        }),
      ),
    );
    for (const { tenant, id } of sends) await waitForMessage(tenant, id, (message) => message.status !== 'pending');

    const ids = sends.map(({ id }) => id);
    const jobs = await eventually(
      async () =>
        (
          await harness.db.raw(
            `SELECT id, state, retry_count FROM pgboss.job WHERE name = 'send-message' AND jsonb_exists_any(data->'message_ids', ?::text[])`,
            [ids],
          )
        ).rows as { state: string; retry_count: number }[],
      (rows) => rows.length > 0 && rows.every((row) => row.state === 'completed'),
      { what: 'every send job of these messages completed' },
    );
    expect(jobs.length).to.be.at.least(2);
    expect(jobs.map((job) => job.retry_count)).to.deep.equal(jobs.map(() => 0));
  });
});
