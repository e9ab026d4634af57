import type { RouteRow } from '../db/routes.ts';
import { createProvider, type DeliveryReport, type Provider, type ProviderLogger } from '../providers/index.ts';

/**
 * One live provider per route (an SMPP route keeps its bind), made again when the route's
 * provider or config changes. Reports from every provider go to one sink with their route; the
 * sink rejects when a report could not be stored, and the provider then leaves it to its peer.
 */
export class ProviderPool {
  private readonly providers = new Map<number, { fingerprint: string; provider: Provider }>();
  private readonly publicUrl: string;
  private readonly onReport: (routeId: number, report: DeliveryReport) => Promise<unknown>;
  private readonly logger: ProviderLogger;

  /**
   * Made once the public URL is known for certain (after the server listens): every provider
   * built from it is complete, and none needs rebuilding when it becomes known.
   */
  constructor(publicUrl: string, onReport: (routeId: number, report: DeliveryReport) => Promise<unknown>, logger: ProviderLogger) {
    this.publicUrl = publicUrl;
    this.onReport = onReport;
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
        await this.onReport(route.id, report);
      },
      logger: this.logger,
    });
    this.providers.set(route.id, { fingerprint, provider });
    return provider;
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map(({ provider }) => provider.close()));
    this.providers.clear();
  }
}
