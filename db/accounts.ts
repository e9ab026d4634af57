import type { Knex } from 'knex';

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

export async function findAccount(db: Knex, id: string): Promise<AccountRow | undefined> {
  return db<AccountRow>('accounts').where({ id }).first();
}

export async function setAccountStatus(db: Knex, id: string, status: AccountRow['status']): Promise<void> {
  await db('accounts').where({ id }).update({ status });
}
