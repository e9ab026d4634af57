import type { Knex } from 'knex';

/**
 * Submissions to upstreams by outcome, per route, in message_stat_details (kind 'submit', key the
 * outcome), so that the statistics can tell a route's submit success rate: delivery rate and
 * latency say how a route's accepted messages fared, not how often it refused or never answered.
 *
 * A submission is inserted 'submitting' before the network call and settled once, by a guarded
 * update, to 'accepted', 'rejected', 'retryable' or 'unknown'; no writer inserts a settled one. So
 * a statement-level trigger on update counts the rows that left 'submitting' in that statement:
 * a second settle of the same row changes nothing and counts nothing.
 *
 * Keyed by the submission's route (a message tried on two routes counts one submission on each,
 * though it is counted as a message on the route that carried it, if any), and by its message's
 * account, country and hour of creation (UTC), like every other counter, so that a range selects
 * a message's submissions with the message. Each backend adds to rows of its own stripe, as the
 * message counters do, and the fold (db/message-stats.ts) moves them into stripe 0 with the rest.
 */
const addSubmits = (settled: string, stripe: string) => `
  INSERT INTO message_stat_details AS d (account_id, hour, route_id, country, stripe, kind, key, count)
  SELECT m.account_id, date_trunc('hour', m.created_at AT TIME ZONE 'UTC'), s.route_id, coalesce(m.country, ''), ${stripe}, 'submit', s.outcome, count(*)
  FROM ${settled} AS s JOIN messages m ON m.id = s.message_id
  GROUP BY 1, 2, 3, 4, 7
  ON CONFLICT (account_id, hour, route_id, country, kind, key, stripe) DO UPDATE SET count = d.count + excluded.count`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    -- No submission is settled meanwhile: one settled before this commits is counted by the
    -- backfill below, one settled after by the trigger, none by both or neither.
    LOCK TABLE message_attempts IN SHARE MODE;

    -- Widened, so every row already there passes it.
    ALTER TABLE message_stat_details DROP CONSTRAINT message_stat_details_kind_check,
      ADD CONSTRAINT message_stat_details_kind_check CHECK (kind IN ('failure', 'submit'));

    CREATE FUNCTION count_settled_submissions() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      ${addSubmits(
        `(SELECT n.message_id, n.route_id, n.outcome FROM old_attempts o JOIN new_attempts n USING (id)
          WHERE o.outcome = 'submitting' AND n.outcome <> 'submitting')`,
        'pg_backend_pid()',
      )};
      RETURN NULL;
    END $$;

    -- The submissions settled so far, so that a range that starts before this migration counts
    -- all of its messages' submissions, not those settled since.
    ${addSubmits(`(SELECT message_id, route_id, outcome FROM message_attempts WHERE outcome <> 'submitting')`, '0')};

    CREATE TRIGGER message_attempts_stats_update AFTER UPDATE ON message_attempts
      REFERENCING OLD TABLE AS old_attempts NEW TABLE AS new_attempts FOR EACH STATEMENT EXECUTE FUNCTION count_settled_submissions();
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    DROP TRIGGER message_attempts_stats_update ON message_attempts;
    DROP FUNCTION count_settled_submissions();
    DELETE FROM message_stat_details WHERE kind = 'submit';
    ALTER TABLE message_stat_details DROP CONSTRAINT message_stat_details_kind_check, ADD CONSTRAINT message_stat_details_kind_check CHECK (kind = 'failure');
  `);
}
