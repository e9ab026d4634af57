import { expect } from 'chai';
import type { Knex } from 'knex';
import { fromUnits, toUnits } from '../../domain/money.ts';

export interface MoneySnapshot {
  balance: string;
  ledger: { kind: string; amount: string; balance_after: string; message_id: string | null }[];
  messages: { id: string; status: string; cost: string; segments: number; route_id: number | null; error: { code: string } | null }[];
}

/** The account's balance, ledger and messages as one consistent snapshot (the pipeline keeps moving meanwhile). */
export async function readMoney(db: Knex, accountId: string): Promise<MoneySnapshot> {
  return db.transaction(
    async (trx) => {
      const { balance } = await trx('accounts').where({ id: accountId }).first('balance');
      const ledger = await trx('ledger_entries').where({ account_id: accountId }).orderBy('id').select('kind', 'amount', 'balance_after', 'message_id');
      const messages = await trx('messages').where({ account_id: accountId }).select('id', 'status', 'cost', 'segments', 'route_id', 'error');
      return { balance, ledger, messages };
    },
    { isolationLevel: 'repeatable read', readOnly: true },
  );
}

const sum = (amounts: string[]): bigint => amounts.reduce((total, amount) => total + toUnits(amount), 0n);

/** Fails naming every offender (chai would print only `[ Array(n) ]`). */
function expectNone(offenders: string[], what: string): void {
  expect(offenders.length, `${what}: ${offenders.join('; ')}`).to.equal(0);
}

/**
 * The money invariants, which hold at every instant, not only when the pipeline is quiet:
 * - the balance equals the sum of the account's ledger, and no balance was ever negative;
 * - the credits in the ledger are exactly the money the test put in;
 * - every ledger row that moved money for a message names a message of the account, and a
 *   message's rows net to minus its cost: what it holds is what it was charged;
 * - a failed message was refunded (cost 0, its rows net to 0);
 * - so the balance equals the credits minus the cost of every message that was not refunded.
 */
export function expectMoneyConsistent(snapshot: MoneySnapshot, credited: bigint, step: string): void {
  const where = `after ${step}`;
  const balance = toUnits(snapshot.balance);
  expect(fromUnits(balance), `${where}: balance against the ledger's sum`).to.equal(fromUnits(sum(snapshot.ledger.map((row) => row.amount))));
  expect(balance >= 0n, `${where}: the balance ${snapshot.balance} is negative`).to.equal(true);
  expectNone(
    snapshot.ledger.filter((row) => toUnits(row.balance_after) < 0n).map((row) => JSON.stringify(row)),
    `${where}: ledger rows that left a negative balance`,
  );
  // Every row is written under the balance's lock, so in id order each one's balance_after is the
  // running sum, and the last is the balance.
  let running = 0n;
  const unchained = snapshot.ledger.filter((row) => (running += toUnits(row.amount)) !== toUnits(row.balance_after));
  expectNone(
    unchained.map((row) => JSON.stringify(row)),
    `${where}: ledger rows whose balance_after is not the running sum`,
  );

  const credits = snapshot.ledger.filter((row) => row.kind === 'credit');
  expect(fromUnits(sum(credits.map((row) => row.amount))), `${where}: credits in the ledger against the money put in`).to.equal(fromUnits(credited));
  expectNone(
    credits.filter((row) => row.message_id !== null).map((row) => JSON.stringify(row)),
    `${where}: credits naming a message`,
  );

  const netByMessage = new Map<string, bigint>();
  for (const row of snapshot.ledger.filter((entry) => entry.kind !== 'credit')) {
    expect(row.message_id, `${where}: a ${row.kind} of ${row.amount} names no message`).to.be.a('string');
    netByMessage.set(row.message_id as string, (netByMessage.get(row.message_id as string) ?? 0n) + toUnits(row.amount));
  }
  const ids = new Set(snapshot.messages.map((message) => message.id));
  expectNone(
    [...netByMessage.keys()].filter((id) => !ids.has(id)),
    `${where}: ledger rows for messages the account does not have`,
  );

  const mismatched = snapshot.messages
    .filter((message) => (netByMessage.get(message.id) ?? 0n) !== -toUnits(message.cost))
    .map((message) => `${message.id} (${message.status}) holds ${message.cost}, its ledger nets ${fromUnits(netByMessage.get(message.id) ?? 0n)}`);
  expectNone(mismatched, `${where}: messages whose cost is not what the ledger charged them`);
  const unrefunded = snapshot.messages.filter((message) => message.status === 'failed' && toUnits(message.cost) !== 0n);
  expectNone(
    unrefunded.map((message) => `${message.id} holds ${message.cost}`),
    `${where}: failed messages not refunded`,
  );

  const kept = sum(snapshot.messages.filter((message) => message.status !== 'failed').map((message) => message.cost));
  expect(fromUnits(balance), `${where}: balance against credits minus the cost of every message not refunded`).to.equal(fromUnits(credited - kept));
}
