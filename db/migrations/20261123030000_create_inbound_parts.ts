import type { Knex } from 'knex';

// Parts of concatenated inbound SMS (SMPP), each stored before the SMSC is answered, until every
// part of its message is here (then they are joined into one inbound message) or the wait for
// the missing ones runs out (then what is here is stored, marked incomplete). A part's key is its
// message's (route, from, to, reference, total) and its sequence number; the unique key makes a
// repeated part a no-op. Parts stay a while after their message was stored (completed_at set), so
// that a part repeated late is still recognised as a repeat.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE inbound_parts (
      id            bigserial PRIMARY KEY,
      route_id      integer NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
      "from"        text NOT NULL,
      "to"          text NOT NULL,
      reference     integer NOT NULL CHECK (reference BETWEEN 0 AND 65535),
      total         smallint NOT NULL CHECK (total BETWEEN 2 AND 255),
      sequence      smallint NOT NULL CHECK (sequence BETWEEN 1 AND total),
      body          text NOT NULL,
      encoding      text NOT NULL CHECK (encoding IN ('GSM-7', 'UCS-2', 'Latin-1')),
      received_at   timestamptz NOT NULL,
      created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
      completed_at  timestamptz,
      UNIQUE (route_id, "from", "to", reference, total, sequence)
    );
    -- The reconciler's two questions: which waiting messages ran out of time, which stored ones
    -- may be forgotten.
    CREATE INDEX inbound_parts_waiting_idx ON inbound_parts (created_at) WHERE completed_at IS NULL;
    CREATE INDEX inbound_parts_completed_idx ON inbound_parts (completed_at) WHERE completed_at IS NOT NULL;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE inbound_parts');
}
