import type { HttpSubmitPayload } from '../../../providers/http.ts';
import { FakeHttpProvider, type FakeBehaviour } from '../../support/fake-http-provider.ts';

export type ReportStatus = 'delivered' | 'undelivered';

export interface ReportingProviderOptions {
  /** How each submit is answered (FakeHttpProvider's behaviours); by default accepted. */
  answer?: (body: HttpSubmitPayload, index: number) => FakeBehaviour;
  /** The delivery report an accepted message gets; by default delivered. */
  outcome?: (messageId: string) => ReportStatus;
  /** How long after its accepting answer a message's report is posted. */
  reportDelayMs?: number;
}

/** Between tries of a report Dispatch did not acknowledge, as a provider's redelivery would wait. */
const REPORT_RETRY_MS = 500;
/** A report Dispatch does not answer in this time is posted again, as a provider's client would give up. */
const REPORT_TIMEOUT_MS = 5000;

/**
 * An SMS provider speaking Dispatch's `http` protocol (a FakeHttpProvider) that also behaves like
 * a real one after accepting: it posts a delivery report to the message's `dlr_url`, and posts it
 * again until Dispatch acknowledges it with a 2xx. Accepted ids derive from the message id, so a
 * resubmit under the same Idempotency-Key gets the same id, as from a provider that dedupes.
 */
export class ReportingProvider {
  readonly fake: FakeHttpProvider;
  /** The reports Dispatch acknowledged with a 2xx, by message id. */
  readonly acknowledged = new Map<string, ReportStatus>();
  /** What kept a report from being posted at all (a dlr_url that is not an absolute URL). */
  readonly problems: string[] = [];
  #options: ReportingProviderOptions;
  #reporting = new Set<string>();
  #timers = new Set<NodeJS.Timeout>();
  #stopped = false;

  private constructor(fake: FakeHttpProvider, options: ReportingProviderOptions) {
    this.fake = fake;
    this.#options = options;
    fake.behave((body, index) => this.#answer(body, index));
  }

  static async start(options: ReportingProviderOptions = {}): Promise<ReportingProvider> {
    return new ReportingProvider(await FakeHttpProvider.start(), options);
  }

  /** The URL to configure as the route's `config.url`. */
  get url(): string {
    return this.fake.url;
  }

  /** How many times each message id was submitted here. */
  submitCounts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const request of this.fake.requests) {
      const id = String(request.body?.message_id);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  /** Reports posted but not acknowledged yet. */
  get unacknowledged(): number {
    return this.#reporting.size - this.acknowledged.size;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const timer of this.#timers) clearTimeout(timer);
    await this.fake.stop();
  }

  #answer(body: HttpSubmitPayload, index: number): FakeBehaviour {
    const behaviour = this.#options.answer?.(body, index) ?? { accept: true };
    if (!('accept' in behaviour)) return behaviour;
    const messageId = String(body?.message_id);
    const providerId = behaviour.id ?? `prov-${messageId}`;
    if (!this.#reporting.has(messageId)) {
      this.#reporting.add(messageId);
      const status = this.#options.outcome?.(messageId) ?? 'delivered';
      this.#later((behaviour.delayMs ?? 0) + (this.#options.reportDelayMs ?? 200), () =>
        this.#report(messageId, String(body?.dlr_url), { id: providerId, status }),
      );
    }
    return { ...behaviour, id: providerId };
  }

  async #report(messageId: string, dlrUrl: string, report: { id: string; status: ReportStatus }): Promise<void> {
    if (!URL.canParse(dlrUrl)) {
      this.problems.push(`message ${messageId} came with a dlr_url that is not an absolute URL: '${dlrUrl}'`);
      return;
    }
    const response = await fetch(dlrUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...report, timestamp: new Date().toISOString() }),
      signal: AbortSignal.timeout(REPORT_TIMEOUT_MS),
    }).catch(() => undefined);
    // The body is not needed; cancelling a body the connection cut mid-way rejects, and that is no matter.
    await response?.body?.cancel().catch(() => {});
    if (response?.ok) this.acknowledged.set(messageId, report.status);
    else this.#later(REPORT_RETRY_MS, () => this.#report(messageId, dlrUrl, report));
  }

  #later(ms: number, task: () => Promise<void>): void {
    if (this.#stopped) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void task();
    }, ms);
    this.#timers.add(timer);
  }
}
