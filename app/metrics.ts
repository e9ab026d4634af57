import type { Knex } from 'knex';
import client from 'prom-client';
import type { LedgerKind } from '../db/ledger.ts';
import { MESSAGE_STATUSES } from '../db/messages.ts';
import { ledgerTotalsByKindAndCurrency, recentMessagesByStatusAndRoute, routeNames, webhookEndpointsByState } from '../db/operations-stats.ts';
import { queueDepths } from '../db/pg-boss-internals.ts';
import { QUEUES } from '../db/queues.ts';
import { WEBHOOK_ATTEMPT_REASONS, type WebhookAttemptReason } from '../jobs/webhook-post.ts';
import type { DeliveryReport, SubmitOutcome } from '../providers/types.ts';

const DATABASE_FIGURES_TTL_MS = 15_000;
const SUBMIT_OUTCOMES: SubmitOutcome['status'][] = ['accepted', 'rejected', 'retryable', 'unknown'];
const REPORT_STATUSES: DeliveryReport['status'][] = ['delivered', 'undelivered'];
const QUEUE_STATES = ['created', 'retry', 'active'];
const LEDGER_KINDS: LedgerKind[] = ['credit', 'debit', 'refund', 'adjustment'];
const ENDPOINT_STATES = ['active', 'disabled'];
/**
 * prom-client's gauges of live handles, requests and resources carry a `_total` suffix that
 * Prometheus keeps for counters (promtool refuses them); the same figures are exported without it.
 */
const MISNAMED_DEFAULT_METRICS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * Prometheus metrics. Request, upstream, delivery-report and webhook figures are counted in this
 * process (sum them across instances); message, queue, ledger and endpoint figures are read from
 * the database when scraped (at most every 15 s), so every instance reports the same global
 * values. Routes are labelled by name, and every label set known in advance (each route's
 * outcomes, each queue's states) is exported at 0 before anything happens, so that rate() and
 * alerts see a series from the start.
 */
export class Metrics {
  readonly registry = new client.Registry();

  readonly httpDuration = new client.Histogram({
    name: 'dispatch_http_request_duration_seconds',
    help: 'Duration of HTTP requests by operation, method and status.',
    labelNames: ['operation', 'method', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly upstreamDuration = new client.Histogram({
    name: 'dispatch_upstream_submit_duration_seconds',
    help: 'Duration of submissions to upstream providers by route name and outcome (accepted, rejected, retryable, unknown).',
    labelNames: ['route', 'outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly upstreamErrors = new client.Counter({
    name: 'dispatch_upstream_errors_total',
    help: 'Failed submissions to upstream providers by route name and error code.',
    labelNames: ['route', 'code'],
    registers: [this.registry],
  });

  private readonly deliveryReports = new client.Counter({
    name: 'dispatch_delivery_reports_total',
    help: 'Delivery reports received from upstreams (repeats included) by route name and status (delivered, undelivered).',
    labelNames: ['route', 'status'],
    registers: [this.registry],
  });

  private readonly deliveryLatency = new client.Histogram({
    name: 'dispatch_delivery_latency_seconds',
    help: 'Time from sent to delivered of delivered messages, by route name, observed once per message by the report that delivers it.',
    labelNames: ['route'],
    buckets: [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
    registers: [this.registry],
  });

  private readonly webhookAttempts = new client.Counter({
    name: 'dispatch_webhook_attempts_total',
    help: 'Webhook delivery attempts by result (succeeded, failed) and reason (ok, http_status, redirect, timeout, address_not_allowed, tls, connection, invalid_request).',
    labelNames: ['result', 'reason'],
    registers: [this.registry],
  });

  private readonly routes = new Map<number, string>();
  private figures: Promise<void> | undefined;
  private figuresAt = 0;
  private readonly refresh: () => Promise<void>;

  private readonly db: Knex;

  constructor(db: Knex) {
    this.db = db;
    const messages = new client.Gauge({
      name: 'dispatch_messages_last_24h',
      help: 'Messages created in the last 24 hours by status and route name (none: not taken by a route).',
      labelNames: ['status', 'route'],
      registers: [this.registry],
    });
    const depth = new client.Gauge({
      name: 'dispatch_queue_jobs',
      help: 'Jobs waiting or running by queue and state (created, retry, active).',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
    });
    const age = new client.Gauge({
      name: 'dispatch_queue_oldest_job_age_seconds',
      help: 'By queue and state: seconds the oldest job has waited since it became due (created, retry) or run (active); 0 when there is none.',
      labelNames: ['queue', 'state'],
      registers: [this.registry],
    });
    const ledger = new client.Gauge({
      name: 'dispatch_ledger_amount',
      help: 'Sum of ledger amounts by kind (credit, debit, refund, adjustment) and account currency.',
      labelNames: ['kind', 'currency'],
      registers: [this.registry],
    });
    const endpoints = new client.Gauge({
      name: 'dispatch_webhook_endpoints',
      help: 'Webhook endpoints not deleted, by state (active, disabled after repeated failures or by their owner).',
      labelNames: ['state'],
      registers: [this.registry],
    });
    for (const result of ['succeeded', 'failed']) {
      for (const reason of WEBHOOK_ATTEMPT_REASONS) if ((reason === 'ok') === (result === 'succeeded')) this.webhookAttempts.inc({ result, reason }, 0);
    }

    this.refresh = async () => {
      const queueNames = Object.values(QUEUES).map((queue) => queue.name);
      const [routeRows, messageRows, queueRows, ledgerRows, endpointRows] = await Promise.all([
        routeNames(db),
        recentMessagesByStatusAndRoute(db, 24),
        queueDepths(db, queueNames),
        ledgerTotalsByKindAndCurrency(db),
        webhookEndpointsByState(db),
      ]);
      for (const route of routeRows) this.knowRoute(route.id, route.name);
      for (const gauge of [messages, depth, age, ledger, endpoints]) gauge.reset();
      for (const route of [...new Set(routeRows.map((row) => row.name)), 'none']) {
        for (const status of MESSAGE_STATUSES) messages.set({ status, route }, 0);
      }
      for (const row of messageRows) messages.inc({ status: row.status, route: row.route }, row.count);
      for (const queue of queueNames) {
        for (const state of QUEUE_STATES) {
          depth.set({ queue, state }, 0);
          age.set({ queue, state }, 0);
        }
      }
      for (const row of queueRows) {
        depth.set({ queue: row.name, state: row.state }, row.count);
        age.set({ queue: row.name, state: row.state }, row.oldest_seconds);
      }
      for (const currency of new Set(ledgerRows.map((row) => row.currency))) {
        for (const kind of LEDGER_KINDS) ledger.set({ kind, currency }, 0);
      }
      for (const row of ledgerRows) ledger.set({ kind: row.kind, currency: row.currency }, Number(row.total));
      for (const state of ENDPOINT_STATES) endpoints.set({ state }, 0);
      for (const row of endpointRows) endpoints.set({ state: row.state }, row.count);
    };
    client.collectDefaultMetrics({ register: this.registry });
    for (const name of MISNAMED_DEFAULT_METRICS) this.registry.removeSingleMetric(name);
  }

  /** A route's series start at 0 the first time it is seen, so that the first failure is an increase. */
  private knowRoute(id: number, name: string): void {
    if (this.routes.get(id) === name) return;
    this.routes.set(id, name);
    for (const outcome of SUBMIT_OUTCOMES) this.upstreamDuration.zero({ route: name, outcome });
    for (const status of REPORT_STATUSES) this.deliveryReports.inc({ route: name, status }, 0);
    this.deliveryLatency.zero({ route: name });
  }

  private async routeName(routeId: number): Promise<string> {
    if (!this.routes.has(routeId)) for (const route of await routeNames(this.db)) this.knowRoute(route.id, route.name);
    return this.routes.get(routeId) ?? String(routeId);
  }

  /** One submission to an upstream and its outcome. */
  submission(route: { id: number; name: string }, outcome: SubmitOutcome, durationMs: number): void {
    this.knowRoute(route.id, route.name);
    this.upstreamDuration.observe({ route: route.name, outcome: outcome.status }, durationMs / 1000);
    if (outcome.status !== 'accepted') this.upstreamErrors.inc({ route: route.name, code: outcome.code });
  }

  /** A delivery report recorded for a route, with its message's sent-to-delivered time when it delivered the message. */
  async deliveryReport(routeId: number, report: DeliveryReport, sentToDeliveredSeconds: number | undefined): Promise<void> {
    const route = await this.routeName(routeId);
    this.deliveryReports.inc({ route, status: report.status });
    if (sentToDeliveredSeconds !== undefined) this.deliveryLatency.observe({ route }, sentToDeliveredSeconds);
  }

  webhookAttempt(reason: WebhookAttemptReason): void {
    this.webhookAttempts.inc({ result: reason === 'ok' ? 'succeeded' : 'failed', reason });
  }

  /** The exposition text, with the database figures brought up to date first. */
  async render(): Promise<string> {
    if (!this.figures || Date.now() - this.figuresAt > DATABASE_FIGURES_TTL_MS) {
      this.figuresAt = Date.now();
      this.figures = this.refresh().catch((error: unknown) => {
        this.figures = undefined;
        throw error;
      });
    }
    await this.figures;
    return this.registry.metrics();
  }
}
