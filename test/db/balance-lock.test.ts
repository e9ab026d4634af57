import { expect } from 'chai';
import { lockBalance } from '../../db/ledger.ts';
import { createTenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';

describe("the balance lock and the account's foreign keys", () => {
  it('is taken while another transaction holds the key-share lock that inserting a message takes, so two such transactions cannot deadlock', async () => {
    const tenant = await createTenant({ balance: 5 });
    const other = await harness.db.transaction();
    const mine = await harness.db.transaction();
    try {
      // What the foreign key of a message inserted by a concurrent send takes on its account.
      await other.raw('SELECT 1 FROM accounts WHERE id = ? FOR KEY SHARE', [tenant.accountId]);
      // FOR UPDATE would wait here until `other` ends; with `other` then asking for the balance
      // too, PostgreSQL would abort one of them as a deadlock.
      expect(await lockBalance(mine, tenant.accountId)).to.equal('5.0000');
    } finally {
      await mine.rollback();
      await other.rollback();
    }
  });
});
