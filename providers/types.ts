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
  /** Seconds the upstream may keep trying to deliver it; omitted: the upstream's own default. */
  validitySeconds?: number;
}

export type SubmitOutcome =
  /**
   * The upstream took the message. `partIds` names every part when the upstream gave each part
   * of a concatenated message its own id (SMPP); delivery reports then arrive per part.
   */
  | { status: 'accepted'; providerMessageId: string; partIds?: string[] }
  /** A hard error: the message fails at once and no other route is tried. */
  | { status: 'rejected'; code: string; message: string }
  /** Nothing reached the provider (refused, DNS, TLS, throttling, 429, 5xx): another route may take it. */
  | { status: 'retryable'; code: string; message: string }
  /**
   * The request was written but no complete answer came (a timeout, a reset or close mid-answer):
   * the provider may have taken the message, so sending it anywhere again may be a second SMS.
   */
  | { status: 'unknown'; code: 'provider_timeout'; message: string };

export interface DeliveryReport {
  providerMessageId: string;
  /** Dispatch's id of the message, when the provider echoes the `message_id` it was sent: it finds a message whose submit answer never came. */
  messageId?: string;
  status: 'delivered' | 'undelivered';
  /** The provider's own error code and text, kept on an undelivered message. */
  errorCode?: string;
  errorMessage?: string;
  /** Undelivered because its validity period ran out before the handset took it. */
  expired?: boolean;
  /** When the carrier says it happened, if it says. */
  at?: Date;
}

/**
 * A message a handset sent to one of the route's numbers, as the provider received it. A part of
 * a concatenated SMS comes with `concatenation`; the parts are joined above the provider.
 */
export interface InboundDelivery {
  /** The provider's id of the message, when it gives one (HTTP providers do; SMPP does not). */
  providerMessageId?: string;
  /** The handset, E.164 with '+'. */
  from: string;
  /** The number it was sent to: E.164 with '+', or a short code's digits. */
  to: string;
  body: string;
  encoding: 'GSM-7' | 'UCS-2' | 'Latin-1';
  /** When the provider says it was received, if it says. */
  receivedAt?: Date;
  /** Present when this is one part of a concatenated message. */
  concatenation?: { reference: number; total: number; sequence: number };
}

export interface ProviderContext {
  routeId: number;
  /** Where an HTTP provider posts delivery reports (built from PUBLIC_URL and the route's secret token). */
  dlrUrl: string;
  /**
   * Called for every delivery report the provider receives; repeats are allowed. It resolves once
   * the report is stored and rejects when it could not be: the provider must then leave the
   * report to its peer to send again (an SMPP deliver_sm answered with a temporary error), never
   * acknowledge it and drop it.
   */
  onReport: (report: DeliveryReport) => Promise<void>;
  /**
   * Called for every inbound message (or part of one) the provider receives; repeats are allowed.
   * Like onReport, it resolves once the message is stored and rejects when it could not be: the
   * provider then leaves it to its peer to deliver again.
   */
  onInbound: (message: InboundDelivery) => Promise<void>;
  /** Where to say what happened to a connection (pino's `logger.info(object, message)` fits). */
  logger?: ProviderLogger;
}

export interface ProviderLogger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
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
