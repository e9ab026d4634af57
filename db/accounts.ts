import type { Knex } from 'knex';
import { pooledBatcher, runPrepared } from './batching.ts';

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
  created_at: Date;
}

export type NewAccount = Pick<AccountRow, 'id' | 'email' | 'name' | 'company_name' | 'country' | 'currency' | 'kyc_verified'>;

/** Inserts an account with a zero balance (an opening balance goes through the ledger); null when the email is taken. */
export async function insertAccount(db: Knex, account: NewAccount): Promise<AccountRow | null> {
  const rows = await db.raw(
    `INSERT INTO accounts (id, email, name, company_name, country, currency, kyc_verified)
     VALUES (:id, :email, :name, :company_name, :country, :currency, :kyc_verified)
     ON CONFLICT DO NOTHING RETURNING *`,
    account,
  );
  return rows.rows[0] ?? null;
}

const FIND_ACCOUNTS = `
  SELECT id, email, name, company_name, country, status, kyc_verified, balance, currency, created_at
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

export async function setAccountStatus(db: Knex, id: string, status: AccountRow['status']): Promise<void> {
  await db('accounts').where({ id }).update({ status });
}
