import type { Knex } from 'knex';
import { openAccount } from '../domain/accounts.ts';
import { createApiKey } from '../domain/api-keys.ts';
import { assign, createRoute } from '../domain/routes.ts';
import { registerSender, reviewSender } from '../domain/senders.ts';
import { SCOPES } from '../domain/scopes.ts';

/** Whether the database holds no account yet: the demo tenant is seeded only then. */
export async function isEmpty(db: Knex): Promise<boolean> {
  return (await db('accounts').first('id')) === undefined;
}

/**
 * The first-start demo tenant of the operator contract: account `Demo` with 10.00 USD, an
 * approved sender `Dispatch`, a simulator route that delivers, and a key with every scope.
 * Returns the key's plaintext, which exists nowhere else.
 */
export async function seedDemoTenant(db: Knex): Promise<{ accountId: string; apiKey: string }> {
  return db.transaction(async (trx) => {
    const account = await openAccount(trx, { email: 'demo@dispatch.local', name: 'Demo', currency: 'USD', balance: 10 });
    const route = await createRoute(trx, {
      name: 'Simulator',
      provider: 'simulator',
      config: { outcome: 'delivered', dlr_delay_ms: 1000 },
      price_per_segment: 0.0075,
    });
    await assign(trx, account.id, route.id, 0);
    const sender = await registerSender(trx, account.id, { sender_id: 'Dispatch', type: 'alphanumeric' });
    await reviewSender(trx, sender.id, 'approve');
    const { plainKey } = await createApiKey(trx, account.id, { name: 'Demo key' }, [...SCOPES], null);
    return { accountId: account.id, apiKey: plainKey };
  });
}
