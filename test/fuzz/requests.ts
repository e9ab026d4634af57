import fc from 'fast-check';
import type { Operation } from 'openapi-backend';
import { randomBase62 } from '../../domain/ids.ts';
import { call, loadContract } from '../support/client.ts';
import { approvedSender, createAdminKey, createTenant, sendingTenant } from '../support/fixtures.ts';
import { arbitraryOf, fieldArbitrary, type Known, type Schema } from './schema-arbitraries.ts';

/** One request the fuzzer sends: `path` is relative to /api/v1, query string included and already encoded. */
export interface FuzzRequest {
  method: string;
  path: string;
  auth: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Schema;
}

/**
 * Values that no field may be given without a 400: every class of defect 7 (NUL, integers past
 * 32 bits, amounts past numeric(18,4), non-canonical integers, leap seconds and year 0), wrong
 * types, huge and empty values.
 */
export const HOSTILE_VALUES: unknown[] = [
  '\u0000',
  'a\u0000b',
  2147483648,
  -2147483649,
  1e15,
  1e21,
  1e308,
  -1,
  0,
  1.5,
  0.00001,
  '1e3',
  '0x10',
  '2.0',
  '2025-06-30T23:59:60Z',
  '0000-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '9999-12-31T23:59:59-01:00',
  'x'.repeat(5000),
  '😀'.repeat(1700),
  '',
  ' ',
  '\ud800',
  "'; DROP TABLE messages; --",
  null,
  true,
  [],
  {},
  [null],
  { nested: { deeper: { deepest: [1, '2', null] } } },
];

/** Raw text put verbatim into a path segment or a query value. */
export const HOSTILE_TOKENS = [
  '%FF',
  '%00',
  'a%00b',
  '%C0%AF',
  '%E2%82',
  '%',
  '1e3',
  '0x10',
  '2.0',
  '2147483648',
  '99999999999999999999',
  '-1',
  '0',
  '%20',
  'null',
  '%27%3B--',
  '2025-06-30T23:59:60Z',
  '0000-01-01T00:00:00Z',
  encodeURIComponent('x'.repeat(3000)),
];

/** Bodies that are not a JSON object of the operation's shape. */
export const HOSTILE_RAW_BODIES = [
  '{',
  '{"a":',
  'null',
  '[]',
  '"text"',
  '1e999',
  '{"__proto__": {"polluted": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  '\ufeff{}',
  '{"a": "\\u0000"}',
];

/** The accounts and resources the fuzzer's requests name, so that valid requests reach real rows. */
export interface FuzzWorld {
  /** Sends and reads messages and events; the only account whose messages create events. */
  sender: { key: string; messageId: string; routeId: number };
  /** Every other customer operation (its webhook endpoints receive only test events: it never sends). */
  quiet: { key: string; senderId: string; spareKeyId: string; endpointId: string; eventId: string };
  /** What the admin operations name. */
  admin: { accountId: string; routeId: number; senderId: string };
  known: Known;
}

/** Builds the world through the API. Keys may make 6,000 requests a minute, the most there is. */
export async function createFuzzWorld(): Promise<FuzzWorld> {
  const sending = await sendingTenant({ balance: 1000 });
  const senderKey = await createAdminKey(sending.accountId, { name: 'Fuzz sender', rate_limit: 6000 });
  const sent = await call('POST', '/messages/send', { auth: senderKey.plain_key, body: { to: '+14155550123', from: 'Dispatch', body: 'Fuzz' } });

  const quietTenant = await createTenant();
  const quietKey = await createAdminKey(quietTenant.accountId, { name: 'Fuzz quiet', rate_limit: 6000 });
  const sender = await call('POST', '/senders/create', { auth: quietKey.plain_key, body: { sender_id: 'FuzzQuiet' } });
  const spare = await createAdminKey(quietTenant.accountId, { name: 'Fuzz spare', rate_limit: 6000 });
  const endpoint = await call('POST', '/webhooks/create', { auth: quietKey.plain_key, body: { url: 'http://127.0.0.1:9/fuzz' } });
  const event = await call('POST', `/webhooks/${endpoint.body.data.id}/test`, { auth: quietKey.plain_key });

  const target = await createTenant();
  await approvedSender(target, 'FuzzTarget');
  const targetSender = await call('GET', '/senders', { auth: target.key });
  const route = await call('POST', '/admin/routes', {
    auth: 'admin',
    body: { name: `fuzz-${randomBase62(8)}`, provider: 'simulator', config: { outcome: 'delivered', dlr_delay_ms: 20 }, price_per_segment: 0.01 },
  });

  return {
    sender: { key: senderKey.plain_key, messageId: sent.body.data.id, routeId: sending.routeIds[0] },
    quiet: { key: quietKey.plain_key, senderId: sender.body.data.id, spareKeyId: spare.id, endpointId: endpoint.body.data.id, eventId: event.body.data.id },
    admin: { accountId: target.accountId, routeId: route.body.data.id, senderId: targetSender.body.data[0].id },
    known: {
      to: ['+14155550123', '+447400123456', '+4412'],
      from: ['Dispatch'],
      recipients: [['+14155550123', '12345', '+10005550100', '']],
      route_id: [sending.routeIds[0], null],
      account_id: [target.accountId],
      sender_id: ['FuzzQuiet', 'Dispatch'],
      name: [`fuzz-${randomBase62(6)}`],
      email: [`fuzz-${randomBase62(8).toLowerCase()}@example.com`],
      config: [{ outcome: 'delivered', dlr_delay_ms: 20 }, { outcome: 'rejected' }, { url: 'http://127.0.0.1:9/submit', timeout_ms: 100 }],
      provider: ['simulator'],
    },
  };
}

const isMessaging = (operation: Operation) => (operation.tags ?? []).some((tag) => tag === 'Messages' || tag === 'Events');
const isAdmin = (operation: Operation) => String(operation.operationId).startsWith('admin');

/** Who calls an operation, and the real value of each path parameter. */
function callerOf(world: FuzzWorld, operation: Operation): { auth: string; pathValues: Record<string, string> } {
  const path = operation.path;
  if (isAdmin(operation)) {
    const id = path.startsWith('/admin/routes/')
      ? String(world.admin.routeId)
      : path.startsWith('/admin/senders/')
        ? world.admin.senderId
        : path.startsWith('/admin/webhooks/')
          ? world.quiet.endpointId
          : world.admin.accountId;
    return { auth: 'admin', pathValues: { id, route_id: String(world.admin.routeId), number: '+447700900123', event_id: world.quiet.eventId } };
  }
  if (isMessaging(operation)) return { auth: world.sender.key, pathValues: { id: world.sender.messageId } };
  const id = path.startsWith('/senders/') ? world.quiet.senderId : path.startsWith('/api-keys/') ? world.quiet.spareKeyId : world.quiet.endpointId;
  return { auth: world.quiet.key, pathValues: { id, event_id: world.quiet.eventId } };
}

const parametersOf = (operation: Operation) => (operation.parameters ?? []) as unknown as Parameter[];

const bodySchemaOf = (operation: Operation): Schema | undefined =>
  (operation.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content?.['application/json']?.schema;

function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(values[name]));
}

const queryString = (entries: [string, string][]) =>
  entries.length === 0 ? '' : `?${entries.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join('&')}`;

/** Query values (encoded) and headers that the operation's parameters accept. */
function validParameters(operation: Operation, known: Known): fc.Arbitrary<{ query: [string, string][]; headers: Record<string, string> }> {
  const query = parametersOf(operation)
    .filter((parameter) => parameter.in === 'query')
    .map((parameter) =>
      fc.option(
        fieldArbitrary(parameter.name, parameter.schema, known).map((value) => [parameter.name, encodeURIComponent(String(value))] as [string, string]),
        { nil: undefined },
      ),
    );
  const idempotency = parametersOf(operation).some((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
  // Header values must be visible ASCII, or fetch refuses to send them.
  const headers = idempotency
    ? fc.option(fc.stringMatching(/^[A-Za-z0-9._:-]{1,255}$/), { nil: undefined }).map((key) => (key ? { 'Idempotency-Key': key } : {}))
    : fc.constant({});
  return fc.record({ query: fc.tuple(...query).map((entries) => entries.filter((entry) => entry !== undefined)), headers });
}

/** Requests the document says are valid, naming real rows where a value is known. */
export function validRequests(world: FuzzWorld, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const { auth, pathValues } = callerOf(world, operation);
  const schema = bodySchemaOf(operation);
  const body = schema ? arbitraryOf(schema, world.known) : fc.constant(undefined);
  return fc.record({ parameters: validParameters(operation, world.known), body }).map(({ parameters, body }) => ({
    method: operation.method.toUpperCase(),
    path: fillPath(operation.path, pathValues) + queryString(parameters.query),
    auth,
    body,
    headers: parameters.headers,
  }));
}

/** Every place in a JSON value, as a key path: object fields and the first array items. */
function placesIn(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return value.slice(0, 2).flatMap((item, index) => [[...prefix, index], ...placesIn(item, [...prefix, index])]);
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([key, item]) => [[...prefix, key], ...placesIn(item, [...prefix, key])]);
  return [];
}

function withValueAt(body: unknown, place: (string | number)[], value: unknown): unknown {
  if (place.length === 0) return value;
  const copy = (Array.isArray(body) ? [...(body as unknown[])] : { ...(body as object) }) as Record<string | number, unknown>;
  const [head, ...rest] = place;
  copy[head] = withValueAt(copy[head], rest, value);
  return copy;
}

/** Valid requests with one thing broken: a path segment, a query value, a body field (or a new one), or the body itself. */
export function mutatedRequests(world: FuzzWorld, operation: Operation): fc.Arbitrary<FuzzRequest> {
  const valid = validRequests(world, operation);
  const { pathValues } = callerOf(world, operation);
  const pathNames = parametersOf(operation)
    .filter((parameter) => parameter.in === 'path')
    .map((parameter) => parameter.name);
  const queryNames = [
    ...parametersOf(operation)
      .filter((parameter) => parameter.in === 'query')
      .map((parameter) => parameter.name),
    'unknown_param',
  ];
  const mutations: fc.Arbitrary<FuzzRequest>[] = [
    fc.record({ request: valid, name: fc.constantFrom(...queryNames), token: fc.constantFrom(...HOSTILE_TOKENS) }).map(({ request, name, token }) => ({
      ...request,
      path: `${request.path}${request.path.includes('?') ? '&' : '?'}${name}=${token}`,
    })),
  ];
  if (pathNames.length > 0) {
    mutations.push(
      fc.record({ request: valid, name: fc.constantFrom(...pathNames), token: fc.constantFrom(...HOSTILE_TOKENS) }).map(({ request, name, token }) => {
        const path = operation.path.replace(/\{([^}]+)\}/g, (_, param: string) => (param === name ? token : encodeURIComponent(pathValues[param])));
        return { ...request, path: path + (request.path.includes('?') ? request.path.slice(request.path.indexOf('?')) : '') };
      }),
    );
  }
  if (bodySchemaOf(operation)) {
    mutations.push(
      fc
        .record({ request: valid, pick: fc.nat(), value: fc.constantFrom(...HOSTILE_VALUES, undefined), unknown: fc.boolean() })
        .map(({ request, pick, value, unknown }) => {
          const places = placesIn(request.body);
          const place = unknown || places.length === 0 ? ['unknown_field'] : places[pick % places.length];
          return { ...request, body: withValueAt(request.body, place, value) };
        }),
      fc.record({ request: valid, value: fc.constantFrom(...HOSTILE_VALUES) }).map(({ request, value }) => ({ ...request, body: value })),
      fc.record({ request: valid, rawBody: fc.constantFrom(...HOSTILE_RAW_BODIES) }).map(({ request, rawBody }) => ({ ...request, body: undefined, rawBody })),
    );
  }
  return fc.oneof(...mutations);
}

/** The document's operations, dereferenced, in document order. */
export async function fuzzedOperations(): Promise<Operation[]> {
  return (await loadContract()).getOperations();
}
