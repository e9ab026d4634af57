import type { Knex } from 'knex';

// Every Dispatch process caches the key and account rows that authenticate requests
// (app/key-cache.ts). The database itself announces, in the transaction that makes it, every
// change to those rows on the channel `dispatch_auth_changes` with the account's id, so that every
// process drops that account's entries as soon as the change commits: whoever makes the change, an
// API call, an admin script or a psql session. The balance (written by every send) and a key's
// last use are left out: authentication reads neither, and they change far too often.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION announce_auth_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_TABLE_NAME = 'accounts' THEN
        PERFORM pg_notify('dispatch_auth_changes', OLD.id);
      ELSE
        PERFORM pg_notify('dispatch_auth_changes', OLD.account_id);
      END IF;
      RETURN NULL;
    END
    $$;

    CREATE TRIGGER accounts_announce_auth_change
      AFTER UPDATE OF id, email, name, company_name, country, status, kyc_verified, currency, created_at OR DELETE ON accounts
      FOR EACH ROW EXECUTE FUNCTION announce_auth_change();

    CREATE TRIGGER api_keys_announce_auth_change
      AFTER UPDATE OF id, account_id, name, key_hash, key_hint, permissions, rate_limit, daily_limit, monthly_limit, allowed_ips, expires_at, revoked_at, created_at OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION announce_auth_change();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER api_keys_announce_auth_change ON api_keys;
    DROP TRIGGER accounts_announce_auth_change ON accounts;
    DROP FUNCTION announce_auth_change();
  `);
}
