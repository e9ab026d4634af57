import { expect } from 'chai';
import { connect } from '../../db/connection.ts';
import { migrateLatest, migrationsCurrent } from '../../db/migrate.ts';
import { siblingDatabase } from '../support/sibling-database.ts';

describe('migrations', () => {
  it('are applied once when several processes start together, serialised by the advisory lock', async () => {
    const database = await siblingDatabase();
    const processes = [connect(database.url), connect(database.url), connect(database.url)];
    try {
      await Promise.all(processes.map((db) => migrateLatest(db)));
      const applied = await processes[0]('knex_migrations').select('name');
      expect(new Set(applied.map((row: { name: string }) => row.name)).size).to.equal(applied.length);
      expect(await migrationsCurrent(processes[0])).to.equal(true);
    } finally {
      await Promise.all(processes.map((db) => db.destroy()));
      await database.drop();
    }
  });
});
