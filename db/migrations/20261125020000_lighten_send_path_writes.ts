import type { Knex } from 'knex';

// The writes after a message's acceptance (its submission, the move to sent, the delivery
// report's move, their events) paid for checks and an index that nothing here needs:
//
// - Three foreign keys share-locked a row that every such transaction shares: the account (on
//   each event) and the route (on each submission and on the move to sent). A share lock taken by
//   concurrent transactions becomes a multixact and a WAL record on that one row, for every
//   message. Accounts and routes are never deleted, and these ids are copied from rows read in
//   the same transaction; an event still references its message, a submission its message, and
//   the message its account. Without them PostgreSQL spent 12% less CPU per message sending a
//   backlog (two alternated pairs of `npm run bench -- --quick --only accept-alone
//   --worker-processes 1 --database-url` on a PostgreSQL 15 cluster).
// - Nothing reads submissions by their 'submitting' outcome (a message's are read by message),
//   yet settling each submission moved it out of that partial index, so no settlement could be
//   a heap-only update. Without it, and with room left on each page for the settled version of
//   its rows (fillfactor), a settlement rewrites no index.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE events DROP CONSTRAINT events_account_id_fkey;
    ALTER TABLE message_attempts DROP CONSTRAINT message_attempts_route_id_fkey;
    ALTER TABLE messages DROP CONSTRAINT messages_route_id_fkey;
    DROP INDEX message_attempts_submitting_idx;
    ALTER TABLE message_attempts SET (fillfactor = 60);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE message_attempts RESET (fillfactor);
    CREATE INDEX message_attempts_submitting_idx ON message_attempts (message_id) WHERE outcome = 'submitting';
    ALTER TABLE messages ADD CONSTRAINT messages_route_id_fkey FOREIGN KEY (route_id) REFERENCES routes (id);
    ALTER TABLE message_attempts ADD CONSTRAINT message_attempts_route_id_fkey FOREIGN KEY (route_id) REFERENCES routes (id);
    ALTER TABLE events ADD CONSTRAINT events_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts (id);
  `);
}
