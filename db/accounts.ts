import type { Knex } from 'knex';
import { pooledBatcher, runPrepared } from './statements.ts';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';

export interface AccountRow {
  id: string;
  email: string;
  name: string;
  company_name: string | null;
  country: string | null;
  status: 'active' | 'suspended' | 'closed';
  kyc_verified: boolean;
  balance: string;
  currency: string;
  /** The balance under which the account is warned (balance.low); null: never. */
  low_balance_threshold: string | null;
  /**
   * Whether the account's sends that do not say replace GSM-7 look-alikes. Sends read it in their
   * own transaction (db/send-checks.ts): a cached authenticated row may be older than a change.
   */
  smart_encoding: boolean;
  /** The send window of the account's sends that give none; null: any hour. */
  send_window: { start: string; end: string; time_zone: string | null } | null;
  created_at: Date;
}

export type NewAccount = Pick<AccountRow, 'id' | 'email' | 'name' | 'company_name' | 'country' | 'currency' | 'kyc_verified'>;

/** Inserts an account with a zero balance (an opening balance goes through the ledger); null when the email is taken. */
export async function insertAccount(db: Knex, account: NewAccount): Promise<AccountRow | null> {
  const { rows } = await db.raw<{ rows: AccountRow[] }>(
    `INSERT INTO accounts (id, email, name, company_name, country, currency, kyc_verified)
     VALUES (:id, :email, :name, :company_name, :country, :currency, :kyc_verified)
     ON CONFLICT DO NOTHING RETURNING *`,
    account,
  );
  return rows[0] ?? null;
}

const FIND_ACCOUNTS = `
  SELECT id, email, name, company_name, country, status, kyc_verified, balance, currency, low_balance_threshold, smart_encoding, send_window, created_at
  FROM accounts WHERE id = ANY ($1::text[])`;

// Read for nearly every request (GET /account, /balance): concurrent reads share a statement.
const accountLookups = pooledBatcher(async (db, ids: string[]): Promise<(AccountRow | undefined)[]> => {
  const rows = await runPrepared<AccountRow>(db, { name: 'find-accounts', text: FIND_ACCOUNTS, values: [ids] });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id));
});

/** The account as it is now: as read by a statement that began after the call. */
export async function findAccount(db: Knex, id: string): Promise<AccountRow | undefined> {
  if (db.isTransaction) return db<AccountRow>('accounts').where({ id }).first();
  return accountLookups(db).submit(id);
}

/** The account, its row locked until the transaction ends, so that what is read stays true while it is changed. */
export async function lockAccount(trx: Knex.Transaction, id: string): Promise<AccountRow | undefined> {
  return trx<AccountRow>('accounts').where({ id }).forUpdate().first();
}

export interface AccountFilter {
  /** A case-insensitive part of the email or the name. */
  q?: string;
  email?: string;
  status?: AccountRow['status'];
}

/** `%`, `_` and `\` match themselves in the search text, not as LIKE patterns. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (char) => `\\${char}`);

export async function listAccounts(db: Knex, filter: AccountFilter, page: PageRequest): Promise<Page<AccountRow>> {
  const query = db<AccountRow>('accounts');
  if (filter.q !== undefined) {
    const pattern = `%${likeLiteral(filter.q)}%`;
    query.where((where) => {
      where.whereILike('email', pattern).orWhereILike('name', pattern);
    });
  }
  if (filter.email !== undefined) query.whereRaw('lower(email) = lower(?)', [filter.email]);
  if (filter.status !== undefined) query.where({ status: filter.status });
  return fetchPage<AccountRow>(db, query, page);
}

export async function setAccountStatus(db: Knex, id: string, status: AccountRow['status']): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>('accounts').where({ id }).update({ status }).returning('*');
  return row;
}

/** The settings a customer changes (PATCH /account); those not given stay as they are. */
export type AccountSettings = Partial<Pick<AccountRow, 'low_balance_threshold' | 'smart_encoding' | 'send_window'>>;

/** Changes the account's settings in one statement; undefined when there is no such account. */
export async function updateAccountSettings(db: Knex, id: string, settings: AccountSettings): Promise<AccountRow | undefined> {
  const [row] = await db<AccountRow>('accounts').where({ id }).update(settings).returning('*');
  return row;
}
