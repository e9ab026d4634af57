import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- The advisory lock keys that order sends and opt-outs of these numbers of an account, in
    -- ascending order (two transactions taking several never deadlock). A key is the account
    -- and one of 64 stripes of the number, not the number itself: a 1,000-recipient bulk or a
    -- 10,000-number import then holds at most 64 locks, where a key per number would hold one
    -- each and exhaust the shared lock table (max_locks_per_transaction, 64 per connection by
    -- default). Two numbers of one stripe only wait for each other; neither passes wrongly.
    CREATE FUNCTION opt_out_lock_keys(account text, numbers text[]) RETURNS SETOF bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT DISTINCT hashtextextended('opt-out:' || account || ':' || (hashtext(n) & 63), 0) AS k
      FROM unnest(numbers) AS n ORDER BY k
    $$;

    -- The send path's opt-out check in one round trip: the numbers' shared locks, held to the
    -- commit, then the lookup. Two statements of a VOLATILE function, each with its own snapshot
    -- under READ COMMITTED: the lookup sees an opt-out that committed while the locks waited.
    CREATE FUNCTION lock_and_find_opt_outs(account text, numbers text[]) RETURNS SETOF text
    LANGUAGE plpgsql VOLATILE AS $$
    BEGIN
      PERFORM pg_advisory_xact_lock_shared(k) FROM opt_out_lock_keys(account, numbers) AS k;
      RETURN QUERY SELECT o.number FROM opt_outs AS o WHERE o.account_id = account AND o.number = ANY (numbers);
    END
    $$;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION lock_and_find_opt_outs(text, text[]); DROP FUNCTION opt_out_lock_keys(text, text[]);');
}
