import type { Knex } from 'knex';

// Named operators of the admin API, each with a role and a token of its own (stored as its
// SHA-256, like an API key's). A name is unique among live operators only, so that a revoked
// operator's name can be given again. The audit log names who did each write; rows written
// before operators existed were written with ADMIN_TOKEN, the root credential.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE operators (
      id            text PRIMARY KEY,
      name          text NOT NULL,
      role          text NOT NULL CHECK (role IN ('admin', 'support', 'viewer')),
      token_hash    bytea NOT NULL UNIQUE,
      created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
      revoked_at    timestamptz,
      last_used_at  timestamptz
    );
    CREATE UNIQUE INDEX operators_live_name_key ON operators (name) WHERE revoked_at IS NULL;
    CREATE INDEX operators_created_idx ON operators (created_at DESC, id DESC);
    ALTER TABLE admin_audit_log ADD COLUMN operator_id text REFERENCES operators (id), ADD COLUMN operator_name text NOT NULL DEFAULT 'root';
    CREATE INDEX admin_audit_log_operator_idx ON admin_audit_log (operator_id, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE admin_audit_log DROP COLUMN operator_name, DROP COLUMN operator_id;
    DROP TABLE operators;
  `);
}
