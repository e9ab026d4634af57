import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- A submission is recorded as 'submitting' before the network call and settled after it, so a
    -- process that dies in between leaves a row that says the outcome is unknown, not a fresh send.
    ALTER TABLE message_attempts DROP CONSTRAINT message_attempts_outcome_check;
    ALTER TABLE message_attempts ADD CONSTRAINT message_attempts_outcome_check
      CHECK (outcome IN ('submitting', 'accepted', 'rejected', 'retryable', 'unknown'));
    ALTER TABLE message_attempts ALTER COLUMN duration_ms DROP NOT NULL;
    CREATE INDEX message_attempts_submitting_idx ON message_attempts (message_id) WHERE outcome = 'submitting';

    -- The parts of a concatenated message that its upstream named one by one (SMPP): a delivery
    -- report names a part, and the message is delivered only when every part is.
    CREATE TABLE message_parts (
      route_id             integer NOT NULL REFERENCES routes (id),
      provider_message_id  text NOT NULL,
      message_id           text NOT NULL REFERENCES messages (id),
      part_number          integer NOT NULL CHECK (part_number >= 1),
      status               text NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'delivered', 'undelivered')),
      PRIMARY KEY (route_id, provider_message_id),
      UNIQUE (message_id, part_number)
    );

    -- The reconciler looks for pending messages by age.
    CREATE INDEX messages_pending_idx ON messages (created_at) WHERE status = 'pending';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP INDEX messages_pending_idx;
    DROP TABLE message_parts;
    DROP INDEX message_attempts_submitting_idx;
    DELETE FROM message_attempts WHERE outcome IN ('submitting', 'unknown');
    ALTER TABLE message_attempts ALTER COLUMN duration_ms SET NOT NULL;
    ALTER TABLE message_attempts DROP CONSTRAINT message_attempts_outcome_check;
    ALTER TABLE message_attempts ADD CONSTRAINT message_attempts_outcome_check CHECK (outcome IN ('accepted', 'rejected', 'retryable'));
  `);
}
