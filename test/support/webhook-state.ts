import type { Knex } from 'knex';
import type { AttemptRow, DeliveryRow, EndpointRow } from '../../db/webhooks.ts';
import { harness } from './harness.ts';

/**
 * Polls `check` until it holds, or throws after `timeoutMs` naming `what`. The deadline bounds a
 * hang; it times nothing.
 */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export const endpointRow = async (endpointId: string, db: Knex = harness.db): Promise<EndpointRow> =>
  db<EndpointRow>('webhook_endpoints').where({ id: endpointId }).first() as Promise<EndpointRow>;

export const deliveriesOf = (endpointId: string, db: Knex = harness.db): Promise<DeliveryRow[]> =>
  db<DeliveryRow>('webhook_deliveries').where({ endpoint_id: endpointId }).orderBy('id');

/** Every attempt to the endpoint, in the order they were recorded. */
export const attemptsOf = (endpointId: string, db: Knex = harness.db): Promise<AttemptRow[]> =>
  db<AttemptRow>('webhook_attempts')
    .where({ endpoint_id: endpointId })
    .orderBy([{ column: 'created_at' }, { column: 'attempt' }]);

/** True once the endpoint has `count` deliveries and none of them is pending. */
export async function allSettled(endpointId: string, count: number, db: Knex = harness.db): Promise<boolean> {
  const deliveries = await deliveriesOf(endpointId, db);
  return deliveries.length >= count && deliveries.every((delivery) => delivery.status !== 'pending');
}
