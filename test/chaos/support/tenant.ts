import { expect } from 'chai';
import { randomBase62 } from '../../../domain/ids.ts';
import { call } from '../../support/client.ts';

export interface ChaosRoute {
  /** `http` config: url, timeout_ms, idempotent, failover_on_timeout. */
  config: Record<string, unknown>;
  priority: number;
  price?: number;
}

export interface ChaosTenant {
  accountId: string;
  key: string;
  routeIds: number[];
}

export const SENDER = 'Dispatch';
export const PRICE = 0.01;

/**
 * One setup step, tried again when the connection closed before any answer: on a machine loaded
 * enough to starve Dispatch for seconds, Node's server can close an idle keep-alive connection
 * just as the next request arrives on it. The tenant is fresh, so a step that did run twice
 * makes no difference that matters.
 */
async function ok<Data>(expected: number, request: () => Promise<{ status: number; body: { data: Data } }>, what: string): Promise<Data> {
  for (let attempt = 1; ; attempt++) {
    try {
      const answer = await request();
      expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).to.equal(expected);
      return answer.body.data;
    } catch (error) {
      if (attempt === 3 || !(error instanceof TypeError && error.message === 'fetch failed')) throw error;
    }
  }
}

/**
 * An account ready to send through `http` routes, all through the API of the Dispatch at
 * `baseUrl` (every answer checked against openapi.yaml): a balance, a key with every scope and
 * the highest rate limit (a load test must not meet it), an approved sender, the routes at their
 * priorities, and optionally a webhook endpoint for every event type.
 */
export async function setUpTenant(baseUrl: string, options: { balance: number; routes: ChaosRoute[]; webhookUrl?: string }): Promise<ChaosTenant> {
  const account = await ok(
    201,
    () =>
      call('POST', '/admin/accounts', {
        auth: 'admin',
        baseUrl,
        body: { email: `chaos-${randomBase62(10).toLowerCase()}@example.com`, name: 'Chaos tenant', balance: options.balance },
      }),
    'create the account',
  );
  const key = await ok(
    201,
    () => call('POST', `/admin/accounts/${account.id}/api-keys`, { auth: 'admin', baseUrl, body: { name: 'Chaos', rate_limit: 6000 } }),
    'create the key',
  );
  const sender = await ok(201, () => call('POST', '/senders/create', { auth: key.plain_key, baseUrl, body: { sender_id: SENDER } }), 'create the sender');
  await ok(200, () => call('POST', `/admin/senders/${sender.id}/approve`, { auth: 'admin', baseUrl }), 'approve the sender');
  const routeIds: number[] = [];
  for (const route of options.routes) {
    const created = await ok(
      201,
      () =>
        call('POST', '/admin/routes', {
          auth: 'admin',
          baseUrl,
          body: { name: `chaos-${randomBase62(10)}`, provider: 'http', config: route.config, price_per_segment: route.price ?? PRICE },
        }),
      `create the route ${JSON.stringify(route.config)}`,
    );
    await ok(
      200,
      () => call('PUT', `/admin/accounts/${account.id}/routes/${created.id}`, { auth: 'admin', baseUrl, body: { priority: route.priority } }),
      'assign the route',
    );
    routeIds.push(created.id);
  }
  if (options.webhookUrl) {
    await ok(
      201,
      () => call('POST', '/webhooks/create', { auth: key.plain_key, baseUrl, body: { url: options.webhookUrl, events: ['*'] } }),
      'create the webhook endpoint',
    );
  }
  return { accountId: account.id, key: key.plain_key, routeIds };
}
