import { randomUUID } from 'node:crypto';
import type { ConfigProblem, Provider, ProviderContext, SubmitOutcome } from './types.ts';

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

/**
 * A provider that needs no network, for demos and tests: it accepts, rejects (a hard error) or
 * is unavailable (a retryable one) as configured, and reports delivery after `dlr_delay_ms`.
 */
export function createSimulatorProvider(config: SimulatorConfig, context: ProviderContext): Provider {
  const timers = new Set<NodeJS.Timeout>();
  return {
    async submit(): Promise<SubmitOutcome> {
      if (config.outcome === 'rejected') return { status: 'rejected', code: 'provider_rejected', message: 'The simulator rejects every message.' };
      if (config.outcome === 'unavailable') return { status: 'retryable', code: 'provider_unavailable', message: 'The simulator is unavailable.' };
      const providerMessageId = `sim-${randomUUID()}`;
      const timer = setTimeout(() => {
        timers.delete(timer);
        const report =
          config.outcome === 'delivered'
            ? { providerMessageId, status: 'delivered' as const, at: new Date() }
            : { providerMessageId, status: 'undelivered' as const, errorCode: 'UNDELIV', errorMessage: 'The simulator reports the handset unreachable.', at: new Date() };
        context.onReport(report).catch(() => {});
      }, config.dlr_delay_ms ?? 1000);
      timers.add(timer);
      return { status: 'accepted', providerMessageId };
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
