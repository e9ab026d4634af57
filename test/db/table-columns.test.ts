import { expect } from 'chai';
import { EVENT_COLUMNS } from '../../db/events.ts';
import { MESSAGE_COLUMNS } from '../../db/messages.ts';
import { ROUTE_COLUMNS } from '../../db/routes.ts';
import { harness } from '../support/harness.ts';

/**
 * The prepared statements that answer whole rows list their table's columns (a prepared `*`
 * fails once a migration adds one): each list must name every column the migrations leave.
 */
describe('the column lists of the prepared statements', () => {
  for (const [table, listed] of [
    ['messages', MESSAGE_COLUMNS],
    ['events', EVENT_COLUMNS],
    ['routes', ROUTE_COLUMNS],
  ] as const) {
    it(`name every column of ${table}`, async () => {
      const columns = await harness.db('information_schema.columns').where({ table_schema: 'public', table_name: table }).pluck('column_name');
      expect([...listed].sort()).to.deep.equal([...columns].sort());
    });
  }
});
