import { checkHttpConfig, createHttpProvider, type HttpConfig } from './http.ts';
import { checkSimulatorConfig, createSimulatorProvider, type SimulatorConfig } from './simulator.ts';
import { checkSmppConfig, createSmppProvider, type SmppConfig } from './smpp.ts';
import type { ConfigProblem, Provider, ProviderContext } from './types.ts';

export type ProviderName = 'simulator' | 'http' | 'smpp';

/** Each provider's config check and constructor, by the name routes store. */
const PROVIDERS: Record<ProviderName, { check: (config: unknown) => ConfigProblem | null; create: (config: never, context: ProviderContext) => Provider }> = {
  simulator: { check: checkSimulatorConfig, create: (config: SimulatorConfig, context) => createSimulatorProvider(config, context) },
  http: { check: checkHttpConfig, create: (config: HttpConfig, context) => createHttpProvider(config, context) },
  smpp: { check: checkSmppConfig, create: (config: SmppConfig, context) => createSmppProvider(config, context) },
};

export const checkProviderConfig = (provider: ProviderName, config: unknown): ConfigProblem | null => PROVIDERS[provider].check(config);

export const createProvider = (provider: ProviderName, config: unknown, context: ProviderContext): Provider =>
  PROVIDERS[provider].create(config as never, context);

export type { DeliveryReport, InboundDelivery, OutboundMessage, Provider, ProviderLogger, SubmitOutcome } from './types.ts';
export { parseHttpDeliveryReport } from './http.ts';
