import { expect } from 'chai';
import type { Knex } from 'knex';
import { insertMessages, type NewMessage } from '../../db/messages.ts';
import { newId, randomBase62 } from '../../domain/ids.ts';
import { call, type Schemas } from './client.ts';
import { harness } from './harness.ts';
import { WebhookReceiver, type Answer } from './webhook-receiver.ts';

export interface Tenant {
  accountId: string;
  /** A key holding every scope. */
  key: string;
  keyId: string;
  /** The instance it lives on, when not the harness's. */
  baseUrl?: string;
}

/** A new account through the admin API (the harness's, or the instance at `baseUrl`), with a balance and a key holding every scope. */
export async function createTenant(options: { balance?: number; currency?: string; baseUrl?: string } = {}): Promise<Tenant> {
  const account = await call('POST', '/admin/accounts', {
    auth: 'admin',
    baseUrl: options.baseUrl,
    body: {
      email: `tenant-${randomBase62(12).toLowerCase()}@example.com`,
      name: 'Test tenant',
      balance: options.balance ?? 10,
      currency: options.currency ?? 'USD',
    },
  });
  expect(account.status, JSON.stringify(account.body)).to.equal(201);
  const key = await createAdminKey(account.body.data.id, { name: 'All scopes' }, options.baseUrl);
  return { accountId: account.body.data.id, key: key.plain_key, keyId: key.id, baseUrl: options.baseUrl };
}

/** A key for an account through the admin API; `permissions` omitted grants every scope. */
export async function createAdminKey(accountId: string, body: Record<string, unknown>, baseUrl?: string) {
  const response = await call('POST', `/admin/accounts/${accountId}/api-keys`, { auth: 'admin', baseUrl, body });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.data as { id: string; plain_key: string; permissions: string[] };
}

/** A named operator of the admin API, made with ADMIN_TOKEN (on the harness's instance, or the one at `baseUrl`); its name is unique to the run. */
export async function createOperator(role: Schemas['OperatorRole'], baseUrl?: string): Promise<Schemas['OperatorWithToken']> {
  const response = await call('POST', '/admin/operators', { auth: 'admin', baseUrl, body: { name: `${role} ${randomBase62(10)}`, role } });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.data;
}

/**
 * Messages written straight into the table, with whatever status and time a test needs (the
 * send path makes them pending and now), through `db` (a transaction, to count them on its
 * connection's stripe). Answers their ids.
 */
export async function storeMessages(tenant: Tenant, specs: (Partial<NewMessage> & { created_at?: Date | string })[], db: Knex = harness.db): Promise<string[]> {
  const rows = specs.map(({ created_at, ...spec }) => ({
    id: newId('msg'),
    account_id: tenant.accountId,
    api_key_id: tenant.keyId,
    to: '+14155550123',
    from: 'Dispatch',
    body: 'Hello',
    status: 'sent' as const,
    encoding: 'GSM-7' as const,
    segments: 1,
    cost: '0.0075',
    currency: 'USD',
    route_id: null,
    requested_route_id: null,
    error: null,
    reference: null,
    ...spec,
  }));
  await insertMessages(db, rows);
  for (const [index, spec] of specs.entries()) {
    if (spec.created_at !== undefined) await db('messages').where({ id: rows[index].id }).update({ created_at: spec.created_at });
  }
  return rows.map((row) => row.id);
}

export interface RouteSpec {
  provider?: 'simulator' | 'http' | 'smpp';
  config?: Record<string, unknown>;
  price?: number;
  prefixes?: string[];
}

/** A route through the admin API, assigned to the account at the given priority; answers its id. */
export async function addRoute(accountId: string, priority: number, spec: RouteSpec = {}, baseUrl?: string): Promise<number> {
  const route = await call('POST', '/admin/routes', {
    auth: 'admin',
    baseUrl,
    body: {
      name: `route-${randomBase62(10)}`,
      provider: spec.provider ?? 'simulator',
      config: spec.config ?? { outcome: 'delivered', dlr_delay_ms: 20 },
      price_per_segment: spec.price ?? 0.01,
      ...(spec.prefixes && { prefixes: spec.prefixes }),
    },
  });
  expect(route.status, JSON.stringify(route.body)).to.equal(201);
  const assigned = await call('PUT', `/admin/accounts/${accountId}/routes/${route.body.data.id}`, { auth: 'admin', baseUrl, body: { priority } });
  expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
  return route.body.data.id;
}

/** An approved sender ID of the account. */
export async function approvedSender(tenant: Tenant, senderId = 'Dispatch'): Promise<string> {
  const { baseUrl } = tenant;
  const created = await call('POST', '/senders/create', { auth: tenant.key, baseUrl, body: { sender_id: senderId } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  expect((await call('POST', `/admin/senders/${created.body.data.id}/approve`, { auth: 'admin', baseUrl })).status).to.equal(200);
  return senderId;
}

/** A tenant ready to send: a balance, an approved sender `Dispatch` and, unless routes are given, one delivering simulator route. */
export async function sendingTenant(options: { balance?: number; routes?: RouteSpec[]; baseUrl?: string } = {}): Promise<Tenant & { routeIds: number[] }> {
  const tenant = await createTenant({ balance: options.balance ?? 10, baseUrl: options.baseUrl });
  await approvedSender(tenant);
  const routeIds = [];
  for (const [priority, spec] of (options.routes ?? [{}]).entries()) routeIds.push(await addRoute(tenant.accountId, priority, spec, options.baseUrl));
  return { ...tenant, routeIds };
}

/**
 * Polls `probe` until `done` holds for what it answers, and answers that; throws with the last
 * answer after `timeoutMs`. The deadline is generous on purpose: it only bounds a failing test.
 * A probe that only reads what the test holds answers at once, without a promise.
 */
export async function eventually<T>(probe: () => T | Promise<T>, done: (value: T) => boolean, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${options.what ?? 'a condition'}; last seen: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Polls a message until `done` holds for it (through the API, validated like every answer). */
export async function waitForMessage(
  tenant: Tenant,
  id: string,
  done: (message: Schemas['Message']) => boolean,
  timeoutMs = 10_000,
): Promise<Schemas['Message']> {
  const read = async () => (await call('GET', `/messages/${id}`, { auth: tenant.key, baseUrl: tenant.baseUrl })).body.data;
  return eventually(read, done, { timeoutMs, what: `message ${id}` });
}

/** A webhook endpoint of the tenant at a new local receiver that answers as told; the caller stops the receiver. */
export async function receivingEndpoint(tenant: Tenant, answer: Answer): Promise<{ receiver: WebhookReceiver; id: string }> {
  const receiver = await WebhookReceiver.start();
  receiver.answerWith(answer);
  const created = await call('POST', '/webhooks/create', { auth: tenant.key, body: { url: receiver.url } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  return { receiver, id: created.body.data.id };
}
