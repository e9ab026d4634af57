import type { RouteRow } from '../db/routes.ts';
import { createProvider, type DeliveryReport, type InboundDelivery, type Provider, type ProviderLogger } from '../providers/index.ts';

/**
 * Where providers hand what they receive, with its route. Each sink resolves once what it was
 * given is stored and rejects when it could not be: the provider then leaves it to its peer.
 */
export interface ProviderSinks {
  onReport: (routeId: number, report: DeliveryReport) => Promise<unknown>;
  onInbound: (routeId: number, message: InboundDelivery) => Promise<unknown>;
}

/**
 * One live provider per route (an SMPP route keeps its bind), made again when the route's
 * provider or config changes. Delivery reports and inbound messages from every provider go to
 * the sinks with their route.
 */
export class ProviderPool {
  private readonly providers = new Map<number, { fingerprint: string; provider: Provider }>();
  private readonly publicUrl: string;
  private readonly sinks: ProviderSinks;
  private readonly logger: ProviderLogger;

  /**
   * Made once the public URL is known for certain (after the server listens): every provider
   * built from it is complete, and none needs rebuilding when it becomes known.
   */
  constructor(publicUrl: string, sinks: ProviderSinks, logger: ProviderLogger) {
    this.publicUrl = publicUrl;
    this.sinks = sinks;
    this.logger = logger;
  }

  /** The URL an HTTP provider posts delivery reports to: unguessable, one per route. */
  dlrUrl(route: Pick<RouteRow, 'dlr_token'>): string {
    return `${this.publicUrl}/callbacks/dlr/${route.dlr_token}`;
  }

  get(route: RouteRow): Provider {
    const fingerprint = JSON.stringify([route.provider, route.config, route.dlr_token]);
    const current = this.providers.get(route.id);
    if (current?.fingerprint === fingerprint) return current.provider;
    if (current) void current.provider.close();
    const provider = createProvider(route.provider, route.config, {
      routeId: route.id,
      dlrUrl: this.dlrUrl(route),
      onReport: async (report) => {
        await this.sinks.onReport(route.id, report);
      },
      onInbound: async (message) => {
        await this.sinks.onInbound(route.id, message);
      },
      logger: this.logger,
    });
    this.providers.set(route.id, { fingerprint, provider });
    return provider;
  }

  /**
   * Makes sure every active SMPP route has its provider, sent through or not: inbound messages
   * (and receipts) only arrive on a bound session, so a route that only receives must bind too.
   */
  bindReceivers(routes: RouteRow[]): void {
    for (const route of routes) if (route.provider === 'smpp' && route.is_active) this.get(route);
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map(({ provider }) => provider.close()));
    this.providers.clear();
  }
}
