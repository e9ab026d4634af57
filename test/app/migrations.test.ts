import { expect } from 'chai';
import pg from 'pg';
import { connect } from '../../db/connection.ts';
import { migrateLatest, migrationsCurrent } from '../../db/migrate.ts';
import { harness } from '../support/harness.ts';

describe('migrations', () => {
  it('are applied once when several processes start together, serialised by the advisory lock', async () => {
    const serverUrl = new URL(harness.database.url);
    const name = `${harness.database.name}_migrate`;
    const admin = new pg.Client({ connectionString: serverUrl.toString() });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    serverUrl.pathname = `/${name}`;
    const processes = [connect(serverUrl.toString()), connect(serverUrl.toString()), connect(serverUrl.toString())];
    try {
      await Promise.all(processes.map((db) => migrateLatest(db)));
      const applied = await processes[0]('knex_migrations').select('name');
      expect(new Set(applied.map((row: { name: string }) => row.name)).size).to.equal(applied.length);
      expect(await migrationsCurrent(processes[0])).to.equal(true);
    } finally {
      await Promise.all(processes.map((db) => db.destroy()));
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
