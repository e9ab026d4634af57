import { randomInt } from 'node:crypto';
import { expect } from 'chai';
import { call } from './client.ts';
import { addRoute, sendingTenant, type RouteSpec, type Tenant } from './fixtures.ts';

/**
 * Numbers unique to a test: the database is shared by the whole run and a number is approved
 * for one account at a time. +1 212 7xx xxxx numbers are valid (they can be sent to).
 */
export const randomLongCode = (): string => `+12127${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
export const randomShortCode = (): string => String(randomInt(10_000_000, 100_000_000));
/** A handset's number, as randomLongCode. */
export const randomHandset = randomLongCode;

export interface InboundTenant extends Tenant {
  /** The account's approved long code: its inbound number, and an approved sender. */
  number: string;
  /** Its simulator route: it takes the simulated inbound messages and sends the replies. */
  routeId: number;
}

/** Registers a long code or short code for the tenant and has the operator approve it: the tenant's inbound number. */
export async function holdNumber(tenant: Tenant, type: 'long_code' | 'short_code' = 'long_code'): Promise<string> {
  const number = type === 'short_code' ? randomShortCode() : randomLongCode();
  const created = await call('POST', '/senders/create', { auth: tenant.key, body: { sender_id: number, type } });
  expect(created.status, JSON.stringify(created.body)).to.equal(201);
  expect((await call('POST', `/admin/senders/${created.body.data.id}/approve`, { auth: 'admin' })).status).to.equal(200);
  return number;
}

/** A sending tenant that also holds an inbound long code (or short code), with a simulator route. */
export async function inboundTenant(options: { balance?: number; routes?: RouteSpec[]; type?: 'long_code' | 'short_code' } = {}): Promise<InboundTenant> {
  const tenant = await sendingTenant(options);
  return { ...tenant, number: await holdNumber(tenant, options.type), routeId: tenant.routeIds[0] };
}

/** One inbound message of the tenant, received on a new simulator route; answers its id. */
export async function ownInboundMessage(tenant: Tenant): Promise<string> {
  const routeId = await addRoute(tenant.accountId, 0);
  return (await simulateInbound(routeId, { from: randomHandset(), to: await holdNumber(tenant), body: 'Hello' })).id;
}

/** A handset's message through the simulator route's admin operation; answers the stored message. */
export async function simulateInbound(routeId: number, message: { from: string; to: string; body: string }) {
  const response = await call('POST', `/admin/routes/${routeId}/inbound`, { auth: 'admin', body: message });
  expect(response.status, JSON.stringify(response.body)).to.equal(201);
  return response.body.data;
}
