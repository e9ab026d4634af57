import type { RouteRow } from '../db/routes.ts';
import { createProvider, type DeliveryReport, type Provider } from '../providers/index.ts';

/**
 * One live provider per route (an SMPP route keeps its bind), made again when the route's
 * provider or config changes. Reports from every provider go to one sink with their route.
 */
export class ProviderPool {
  private readonly providers = new Map<number, { fingerprint: string; provider: Provider }>();
  private readonly publicUrl: () => string;
  private readonly onReport: (routeId: number, report: DeliveryReport) => Promise<void>;

  /** `publicUrl` is read when a provider is made: the listening address is known only after start. */
  constructor(publicUrl: () => string, onReport: (routeId: number, report: DeliveryReport) => Promise<void>) {
    this.publicUrl = publicUrl;
    this.onReport = onReport;
  }

  /** The URL an HTTP provider posts delivery reports to: unguessable, one per route. */
  dlrUrl(route: Pick<RouteRow, 'dlr_token'>): string {
    return `${this.publicUrl()}/callbacks/dlr/${route.dlr_token}`;
  }

  get(route: RouteRow): Provider {
    const fingerprint = JSON.stringify([route.provider, route.config, route.dlr_token]);
    const current = this.providers.get(route.id);
    if (current?.fingerprint === fingerprint) return current.provider;
    if (current) void current.provider.close();
    const provider = createProvider(route.provider, route.config, {
      routeId: route.id,
      dlrUrl: this.dlrUrl(route),
      onReport: (report) => this.onReport(route.id, report),
    });
    this.providers.set(route.id, { fingerprint, provider });
    return provider;
  }

  async close(): Promise<void> {
    await Promise.all([...this.providers.values()].map(({ provider }) => provider.close()));
    this.providers.clear();
  }
}
