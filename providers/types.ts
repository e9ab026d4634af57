/**
 * The one small interface every upstream connector implements: submit a message, and report
 * delivery reports as they arrive. Providers know nothing of Dispatch's rules or storage.
 */

export interface OutboundMessage {
  /** Dispatch's message id; passed upstream as an idempotency key where the provider takes one. */
  messageId: string;
  to: string;
  from: string;
  body: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  /** The body split as Dispatch bills it (domain/encoding.ts); a concatenated SMS sends one part per segment. */
  parts: string[];
}

export type SubmitOutcome =
  | { status: 'accepted'; providerMessageId: string }
  /** A hard error: the message fails at once and no other route is tried. */
  | { status: 'rejected'; code: string; message: string }
  /** Network error, timeout, throttling, 429 or 5xx: another route may succeed. */
  | { status: 'retryable'; code: string; message: string };

export interface DeliveryReport {
  providerMessageId: string;
  status: 'delivered' | 'undelivered';
  /** The provider's own error code and text, kept on an undelivered message. */
  errorCode?: string;
  errorMessage?: string;
  /** When the carrier says it happened, if it says. */
  at?: Date;
}

export interface ProviderContext {
  routeId: number;
  /** Where an HTTP provider posts delivery reports (built from PUBLIC_URL and the route's secret token). */
  dlrUrl: string;
  /** Called for every delivery report the provider receives; repeats are allowed. */
  onReport: (report: DeliveryReport) => Promise<void>;
}

export interface Provider {
  submit(message: OutboundMessage): Promise<SubmitOutcome>;
  /** Releases connections and timers. */
  close(): Promise<void>;
}

/** What is wrong with a route's config, naming the field as `config.<field>`. */
export interface ConfigProblem {
  param: string;
  message: string;
}
