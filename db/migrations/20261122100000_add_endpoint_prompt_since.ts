import type { Knex } from 'knex';

// An endpoint is delivered to in the prompt lane only while its attempts end promptly; until then
// (new, or its last attempt was slow or timed out) it is on probation: one attempt at a time, by
// the workers not reserved for prompt endpoints (jobs/deliver-webhook.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    ALTER TABLE webhook_endpoints ADD COLUMN prompt_since timestamptz;
    COMMENT ON COLUMN webhook_endpoints.prompt_since IS 'since when its attempts end promptly; null while on probation';
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_endpoints DROP COLUMN prompt_since');
}
