import type { Knex } from 'knex';

// What operators did through the admin API, one row per write, written in the write's own
// transaction: a change without its row (or a row without its change) cannot commit. `before`
// and `after` are the target as the admin API shows it, so secrets never land here.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE admin_audit_log (
      id           text PRIMARY KEY,
      action       text NOT NULL,
      target_type  text NOT NULL,
      target_id    text NOT NULL,
      before       jsonb,
      after        jsonb,
      reason       text,
      created_at   timestamptz NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX admin_audit_log_created_idx ON admin_audit_log (created_at DESC, id DESC);
    CREATE INDEX admin_audit_log_target_idx ON admin_audit_log (target_type, target_id, created_at DESC, id DESC);
    CREATE INDEX admin_audit_log_action_idx ON admin_audit_log (action, created_at DESC, id DESC);
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE admin_audit_log');
}
