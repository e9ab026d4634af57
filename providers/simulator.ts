import { randomUUID } from 'node:crypto';
import type { ConfigProblem, DeliveryReport, Provider, ProviderContext, ProviderLogger, SubmitOutcome } from './types.ts';

export interface SimulatorConfig {
  outcome: 'delivered' | 'undelivered' | 'rejected' | 'unavailable';
  dlr_delay_ms?: number;
}

const OUTCOMES = ['delivered', 'undelivered', 'rejected', 'unavailable'];
const FIELDS = ['outcome', 'dlr_delay_ms'];

export function checkSimulatorConfig(config: unknown): ConfigProblem | null {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { param: 'config', message: 'config must be an object.' };
  const fields = config as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !FIELDS.includes(field));
  if (unknown) return { param: `config.${unknown}`, message: `Received unknown parameter: config.${unknown}.` };
  if (!OUTCOMES.includes(fields.outcome as string)) return { param: 'config.outcome', message: `config.outcome must be one of: ${OUTCOMES.join(', ')}.` };
  const delay = fields.dlr_delay_ms;
  if (delay !== undefined && !(Number.isInteger(delay) && (delay as number) >= 0 && (delay as number) <= 3_600_000)) {
    return { param: 'config.dlr_delay_ms', message: 'config.dlr_delay_ms must be an integer from 0 to 3600000.' };
  }
  return null;
}

export interface SimulatorOptions {
  /** The first wait before a report that could not be stored is delivered again (default 1 s), doubled each time... */
  redeliveryMinMs?: number;
  /** ...up to this (default 30 s)... */
  redeliveryMaxMs?: number;
  /** ...for this long after its first delivery, then given up (default 1 h). */
  redeliveryForMs?: number;
}

const SILENT: ProviderLogger = { info() {}, warn() {}, error() {} };

/**
 * A provider that needs no network, for demos and tests: it accepts, rejects (a hard error) or
 * is unavailable (a retryable one) as configured, and reports delivery after `dlr_delay_ms`.
 *
 * It plays a peer that redelivers, as an SMSC or an HTTP provider does: a report that could not
 * be stored (onReport rejected) is delivered again with a bounded backoff until it is stored,
 * `redeliveryForMs` has passed, or the provider is closed.
 */
export function createSimulatorProvider(config: SimulatorConfig, context: ProviderContext, options: SimulatorOptions = {}): Provider {
  const minMs = options.redeliveryMinMs ?? 1000;
  const maxMs = options.redeliveryMaxMs ?? 30_000;
  const forMs = options.redeliveryForMs ?? 3_600_000;
  const logger = context.logger ?? SILENT;
  const timers = new Set<NodeJS.Timeout>();
  let closed = false;

  const later = (run: () => void, delayMs: number): void => {
    if (closed) return;
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, delayMs);
    timers.add(timer);
  };

  const deliver = (report: DeliveryReport, firstAt: number, delayMs: number): void => {
    context.onReport(report).catch((error: unknown) => {
      if (closed) return;
      const details = { routeId: context.routeId, providerMessageId: report.providerMessageId, error: error instanceof Error ? error.message : String(error) };
      if (Date.now() + delayMs - firstAt > forMs) {
        logger.error(details, 'Simulator delivery report never recorded; given up');
        return;
      }
      // Said once per report; the giving up is said too.
      if (delayMs === minMs) logger.warn({ ...details, retryInMs: delayMs }, 'Simulator delivery report not recorded; delivering it again later');
      later(() => deliver(report, firstAt, Math.min(delayMs * 2, maxMs)), delayMs);
    });
  };

  // The simulator does no I/O: a submission's outcome is known at once.
  const submitNow = (): SubmitOutcome => {
    if (closed) return { status: 'retryable', code: 'provider_unavailable', message: 'The simulator is closed.' };
    if (config.outcome === 'rejected') return { status: 'rejected', code: 'provider_rejected', message: 'The simulator rejects every message.' };
    if (config.outcome === 'unavailable') return { status: 'retryable', code: 'provider_unavailable', message: 'The simulator is unavailable.' };
    const providerMessageId = `sim-${randomUUID()}`;
    later(() => {
      const report: DeliveryReport =
        config.outcome === 'delivered'
          ? { providerMessageId, status: 'delivered', at: new Date() }
          : {
              providerMessageId,
              status: 'undelivered',
              errorCode: 'UNDELIV',
              errorMessage: 'The simulator reports the handset unreachable.',
              at: new Date(),
            };
      deliver(report, Date.now(), minMs);
    }, config.dlr_delay_ms ?? 1000);
    return { status: 'accepted', providerMessageId };
  };

  return {
    submit(): Promise<SubmitOutcome> {
      return Promise.resolve(submitNow());
    },
    close(): Promise<void> {
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return Promise.resolve();
    },
  };
}
