import type { Knex } from 'knex';
import client from 'prom-client';
import { ledgerTotalsByKind, queueDepths, recentMessagesByStatusAndRoute } from '../db/operations-stats.ts';
import { QUEUES } from '../db/queues.ts';

const DATABASE_FIGURES_TTL_MS = 15_000;

/**
 * Prometheus metrics. Request, upstream and webhook figures are counted in this process (sum
 * them across instances); message, queue and ledger figures are read from the database when
 * scraped (at most every 15 s), so every instance reports the same global values.
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

  readonly upstreamDuration = new client.Histogram({
    name: 'dispatch_upstream_submit_duration_seconds',
    help: 'Duration of submissions to upstream providers by route and outcome (accepted, rejected, retryable).',
    labelNames: ['route', 'outcome'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly upstreamErrors = new client.Counter({
    name: 'dispatch_upstream_errors_total',
    help: 'Failed submissions to upstream providers by route and error code.',
    labelNames: ['route', 'code'],
    registers: [this.registry],
  });

  readonly webhookAttempts = new client.Counter({
    name: 'dispatch_webhook_attempts_total',
    help: 'Webhook delivery attempts by result.',
    labelNames: ['result'],
    registers: [this.registry],
  });

  private figures: Promise<void> | undefined;
  private figuresAt = 0;

  constructor(db: Knex) {
    const messages = new client.Gauge({ name: 'dispatch_messages_last_24h', help: 'Messages created in the last 24 hours by status and route.', labelNames: ['status', 'route'], registers: [this.registry] });
    const depth = new client.Gauge({ name: 'dispatch_queue_jobs', help: 'Jobs waiting or running by queue and state.', labelNames: ['queue', 'state'], registers: [this.registry] });
    const age = new client.Gauge({ name: 'dispatch_queue_oldest_job_age_seconds', help: 'Age of the oldest waiting or running job by queue and state.', labelNames: ['queue', 'state'], registers: [this.registry] });
    const ledger = new client.Gauge({ name: 'dispatch_ledger_amount_total', help: 'Sum of ledger amounts by kind (credit, debit, refund, adjustment), in account currency units.', labelNames: ['kind'], registers: [this.registry] });
    const refresh = async () => {
      const [messageRows, queueRows, ledgerRows] = await Promise.all([
        recentMessagesByStatusAndRoute(db, 24),
        queueDepths(db, Object.values(QUEUES).map((queue) => queue.name)),
        ledgerTotalsByKind(db),
      ]);
      for (const gauge of [messages, depth, age, ledger]) gauge.reset();
      for (const row of messageRows) messages.set({ status: row.status, route: String(row.route_id ?? 'none') }, row.count);
      for (const row of queueRows) {
        depth.set({ queue: row.name, state: row.state }, row.count);
        age.set({ queue: row.name, state: row.state }, row.oldest_seconds);
      }
      for (const row of ledgerRows) ledger.set({ kind: row.kind }, Number(row.total));
    };
    this.refreshFigures = () => {
      if (!this.figures || Date.now() - this.figuresAt > DATABASE_FIGURES_TTL_MS) {
        this.figuresAt = Date.now();
        this.figures = refresh().catch((error: unknown) => {
          this.figures = undefined;
          throw error;
        });
      }
      return this.figures;
    };
    client.collectDefaultMetrics({ register: this.registry, prefix: 'dispatch_' });
  }

  private readonly refreshFigures: () => Promise<void>;

  /** The exposition text, with the database figures brought up to date first. */
  async render(): Promise<string> {
    await this.refreshFigures();
    return this.registry.metrics();
  }
}
