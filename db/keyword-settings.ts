import type { Knex } from 'knex';

export interface KeywordSettingsRow {
  account_id: string;
  opt_out_keywords: string[];
  opt_in_keywords: string[];
  help_keywords: string[];
  opt_out_reply: string | null;
  opt_in_reply: string | null;
  help_reply: string | null;
  updated_at: Date;
}

export type KeywordSettingsChange = Partial<Omit<KeywordSettingsRow, 'account_id' | 'updated_at'>>;

/** Serialises changes of one account's settings to the commit: each is checked against the lists the one before left. */
export async function lockKeywordSettings(trx: Knex.Transaction, accountId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`keyword-settings:${accountId}`]);
}

export async function findKeywordSettings(db: Knex, accountId: string): Promise<KeywordSettingsRow | undefined> {
  return db<KeywordSettingsRow>('keyword_settings').where({ account_id: accountId }).first();
}

/** Writes the given fields of the account's settings (creating its row on first change); answers the whole row. */
export async function upsertKeywordSettings(db: Knex, accountId: string, change: KeywordSettingsChange): Promise<KeywordSettingsRow> {
  const [row] = await db<KeywordSettingsRow>('keyword_settings')
    .insert({ account_id: accountId, ...change })
    .onConflict('account_id')
    .merge({ ...change, updated_at: db.raw('clock_timestamp()') } as never)
    .returning('*');
  return row;
}
