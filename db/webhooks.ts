import type { Knex } from 'knex';
import { fetchPage, type Page, type PageRequest } from './pagination.ts';
import { liveJobValues, noLiveJob } from './pg-boss-internals.ts';
import { QUEUES } from './queues.ts';

export interface EndpointRow {
  id: string;
  account_id: string;
  url: string;
  description: string | null;
  events: string[];
  signing_secret: string;
  /** The secret a rotation replaced, still signed with until previous_secret_expires_at. */
  previous_signing_secret: string | null;
  previous_secret_expires_at: Date | null;
  is_active: boolean;
  failure_count: number;
  last_success_at: Date | null;
  last_failure_at: Date | null;
  disabled_at: Date | null;
  deleted_at: Date | null;
  /** Since when its attempts end promptly; null while on probation (new, or its last attempt was slow). */
  prompt_since: Date | null;
  created_at: Date;
}

export interface DeliveryRow {
  id: number;
  endpoint_id: string;
  event_id: string;
  status: 'pending' | 'succeeded' | 'abandoned';
  attempts: number;
  created_at: Date;
  finished_at: Date | null;
}

export interface AttemptRow {
  id: string;
  delivery_id: number;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  succeeded: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

const live = (db: Knex) => db<EndpointRow>('webhook_endpoints').whereNull('deleted_at');

export async function insertEndpoint(
  db: Knex,
  endpoint: Pick<EndpointRow, 'id' | 'account_id' | 'url' | 'description' | 'events' | 'signing_secret'>,
): Promise<EndpointRow> {
  const [row] = await db<EndpointRow>('webhook_endpoints').insert(endpoint).returning('*');
  return row;
}

export async function findEndpoint(db: Knex, id: string, accountId?: string): Promise<EndpointRow | undefined> {
  const query = live(db).andWhere({ id });
  if (accountId !== undefined) query.andWhere({ account_id: accountId });
  return query.first();
}

export async function listEndpoints(db: Knex, accountId: string): Promise<EndpointRow[]> {
  return live(db)
    .andWhere({ account_id: accountId })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'id', order: 'desc' },
    ]);
}

export async function deleteEndpoint(db: Knex, accountId: string, id: string): Promise<boolean> {
  return (await live(db).andWhere({ account_id: accountId, id }).update({ deleted_at: db.fn.now(), is_active: false })) > 0;
}

/** An endpoint as fanning an event out reads it. */
export type FanOutEndpoint = Pick<EndpointRow, 'id' | 'account_id' | 'events' | 'prompt_since' | 'last_success_at' | 'last_failure_at'>;

/**
 * A scalar subquery: the active endpoints of the accounts that the subquery `accountIds` lists, as
 * a JSON array that endpointsFromJson reads. It runs inside the statement that inserts events
 * (db/events.ts), so that recording events costs no round trip of its own for their endpoints.
 */
export const activeEndpointsJson = (accountIds: string): string => `
  (SELECT coalesce(json_agg(json_build_object('id', e.id, 'account_id', e.account_id, 'events', e.events, 'prompt_since', e.prompt_since,
     'last_success_at', e.last_success_at, 'last_failure_at', e.last_failure_at)), '[]')
   FROM webhook_endpoints e WHERE e.account_id IN (${accountIds}) AND e.is_active AND e.deleted_at IS NULL)`;

type Standing = 'prompt_since' | 'last_success_at' | 'last_failure_at';
const dateOrNull = (value: string | null): Date | null => (value === null ? null : new Date(value));

export const endpointsFromJson = (endpoints: (Omit<FanOutEndpoint, Standing> & Record<Standing, string | null>)[]): FanOutEndpoint[] =>
  endpoints.map((endpoint) => ({
    ...endpoint,
    prompt_since: dateOrNull(endpoint.prompt_since),
    last_success_at: dateOrNull(endpoint.last_success_at),
    last_failure_at: dateOrNull(endpoint.last_failure_at),
  }));

export async function insertDeliveries(db: Knex, deliveries: Pick<DeliveryRow, 'endpoint_id' | 'event_id'>[]): Promise<DeliveryRow[]> {
  if (deliveries.length === 0) return [];
  return db<DeliveryRow>('webhook_deliveries').insert(deliveries).returning('*');
}

/** A delivery with what it needs to be sent; with `lock`, its row locked for the transaction. */
export async function findDelivery(db: Knex, id: number, lock = false) {
  const query = db('webhook_deliveries as d')
    .join('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .join('events as e', 'e.id', 'd.event_id')
    .where('d.id', id);
  if (lock) query.forUpdate('d');
  return query.first(
    'd.id',
    'd.status',
    'd.attempts',
    'd.endpoint_id',
    'd.event_id',
    'w.account_id',
    'w.url',
    'w.signing_secret',
    'w.is_active',
    'w.deleted_at',
    'w.prompt_since',
    'w.last_success_at',
    'w.last_failure_at',
    // Judged by the database's clock, the one that set the expiry.
    db.raw('CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_signing_secret END AS previous_signing_secret'),
    'e.type',
    'e.data',
    'e.created_at as event_created_at',
  ) as Promise<
    | (Pick<DeliveryRow, 'id' | 'status' | 'attempts' | 'endpoint_id' | 'event_id'> &
        Pick<
          EndpointRow,
          | 'account_id'
          | 'url'
          | 'signing_secret'
          | 'previous_signing_secret'
          | 'is_active'
          | 'deleted_at'
          | 'prompt_since'
          | 'last_success_at'
          | 'last_failure_at'
        > & { type: string; data: Record<string, unknown>; event_created_at: Date })
    | undefined
  >;
}

export async function finishDelivery(db: Knex, id: number, status: 'succeeded' | 'abandoned', attempts: number): Promise<void> {
  await db('webhook_deliveries').where({ id }).update({ status, attempts, finished_at: db.fn.now() });
}

/** Abandons a delivery that is still pending, without an attempt (its endpoint is gone or disabled). */
export async function abandonDelivery(db: Knex, id: number): Promise<void> {
  await db('webhook_deliveries').where({ id, status: 'pending' }).update({ status: 'abandoned', finished_at: db.fn.now() });
}

/** Pending deliveries created before `before` that no job will move (their job died, or was spent during an outage). */
export async function strandedDeliveryIds(db: Knex, before: Date, limit = 1000): Promise<number[]> {
  // A set difference computed once, as liveJobValues says a scan must.
  const { rows } = await db.raw<{ rows: { id: number }[] }>(
    `SELECT id::bigint AS id FROM (SELECT id::text FROM webhook_deliveries WHERE status = 'pending' AND created_at < ?
       EXCEPT ${liveJobValues(QUEUES.deliverWebhook.name, ['delivery_id'])}) AS stranded ORDER BY 1 LIMIT ?`,
    [before, limit],
  );
  return rows.map((row) => row.id);
}

/** Read after locking the delivery's row, so that a job committed meanwhile by its holder is seen. */
export async function isStranded(db: Knex, id: number): Promise<boolean> {
  const row: unknown = await db('webhook_deliveries as d')
    .where({ 'd.id': id, 'd.status': 'pending' })
    .andWhereRaw(noLiveJob(QUEUES.deliverWebhook.name, ['delivery_id'], 'd.id'))
    .first('d.id');
  return row !== undefined;
}

export async function countAttempt(db: Knex, id: number, attempts: number): Promise<void> {
  await db('webhook_deliveries').where({ id }).update({ attempts });
}

export async function insertAttempt(db: Knex, attempt: Omit<AttemptRow, 'created_at'>): Promise<void> {
  await db('webhook_attempts').insert(attempt);
}

export interface AttemptFilter {
  eventId?: string;
  succeeded?: boolean;
}

export async function listAttempts(db: Knex, endpointId: string, page: PageRequest, filter: AttemptFilter = {}): Promise<Page<AttemptRow>> {
  const query = db<AttemptRow>('webhook_attempts').where({ endpoint_id: endpointId });
  if (filter.eventId !== undefined) query.andWhere({ event_id: filter.eventId });
  if (filter.succeeded !== undefined) query.andWhere({ succeeded: filter.succeeded });
  return fetchPage<AttemptRow>(db, query, page);
}

/**
 * Records an attempt on its endpoint: a success resets the count of failed deliveries; a prompt
 * attempt starts (or continues) its run of prompt answers, any other ends it. Answers its standing.
 */
export async function recordEndpointAttempt(
  db: Knex,
  id: string,
  attempt: { succeeded: boolean; prompt: boolean },
): Promise<Pick<EndpointRow, 'prompt_since' | 'last_success_at' | 'last_failure_at'>> {
  const [row] = await db('webhook_endpoints')
    .where({ id })
    .update({
      ...(attempt.succeeded ? { failure_count: 0, last_success_at: db.fn.now() } : { last_failure_at: db.fn.now() }),
      prompt_since: attempt.prompt ? db.raw('coalesce(prompt_since, now())') : null,
    })
    .returning<Pick<EndpointRow, 'prompt_since' | 'last_success_at' | 'last_failure_at'>[]>(['prompt_since', 'last_success_at', 'last_failure_at']);
  return row;
}

/** Counts one more failed delivery in a row; answers the new count. */
export async function countFailedDelivery(db: Knex, id: string): Promise<number> {
  const [row] = await db('webhook_endpoints').where({ id }).increment('failure_count', 1).returning<{ failure_count: number }[]>('failure_count');
  return row.failure_count;
}

/** Disables an active endpoint and abandons its pending deliveries; false when it was not active. */
export async function disableEndpoint(db: Knex, id: string): Promise<boolean> {
  const disabled = await db('webhook_endpoints').where({ id, is_active: true }).update({ is_active: false, disabled_at: db.fn.now() });
  if (disabled === 0) return false;
  await db('webhook_deliveries').where({ endpoint_id: id, status: 'pending' }).update({ status: 'abandoned', finished_at: db.fn.now() });
  return true;
}

export async function enableEndpoint(db: Knex, id: string): Promise<EndpointRow | undefined> {
  const [row] = await live(db).andWhere({ id }).update({ is_active: true, disabled_at: null, failure_count: 0 }).returning('*');
  return row;
}

/**
 * Replaces an endpoint's signing secret; the replaced one stays valid for graceSeconds (0: not at
 * all), and any secret kept from an earlier rotation is dropped. The right-hand signing_secret is
 * the row's value before the update.
 */
export async function replaceSigningSecret(db: Knex, accountId: string, id: string, secret: string, graceSeconds: number): Promise<EndpointRow | undefined> {
  const keep = graceSeconds > 0;
  const [row] = await live(db)
    .andWhere({ account_id: accountId, id })
    .update({
      signing_secret: secret,
      previous_signing_secret: keep ? db.raw('signing_secret') : null,
      previous_secret_expires_at: keep ? db.raw('now() + make_interval(secs => ?)', [graceSeconds]) : null,
    } as never)
    .returning('*');
  return row;
}

/** Locks a live endpoint for a change: the account's, or any account's when `accountId` is undefined (the operator). */
export async function lockEndpoint(db: Knex, accountId: string | undefined, id: string): Promise<EndpointRow | undefined> {
  return live(db)
    .andWhere({ id, ...(accountId !== undefined && { account_id: accountId }) })
    .forUpdate()
    .first();
}

export async function updateEndpoint(db: Knex, id: string, changes: Partial<Pick<EndpointRow, 'url' | 'description' | 'events'>>): Promise<EndpointRow> {
  const [row] = await db<EndpointRow>('webhook_endpoints').where({ id }).update(changes).returning('*');
  return row;
}
