import type { ConfigProblem, DeliveryReport, OutboundMessage, Provider, ProviderContext, SubmitOutcome } from './types.ts';

/**
 * The generic HTTP upstream: Dispatch POSTs each message as JSON to the provider's URL, and the
 * provider POSTs delivery reports back to the route's `dlr_url` (parsed by parseHttpDeliveryReport).
 */
export interface HttpConfig {
  url: string;
  token?: string;
  /** Deadline for the whole exchange, response body included. Default 5000. */
  timeout_ms?: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 60_000;
const FIELDS = ['url', 'token', 'timeout_ms'];

/** Responses are small JSON documents; a bigger body is not read past this. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Provider texts are carried into the message's error; keep them to a sensible size. */
const MAX_CODE_LENGTH = 100;
const MAX_MESSAGE_LENGTH = 1000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export function checkHttpConfig(config: unknown): ConfigProblem | null {
  if (!isObject(config)) return { param: 'config', message: 'config must be an object.' };
  const unknown = Object.keys(config).find((field) => !FIELDS.includes(field));
  if (unknown) return { param: `config.${unknown}`, message: `Received unknown parameter: config.${unknown}.` };

  const { url, token, timeout_ms: timeout } = config;
  if (url === undefined) return { param: 'config.url', message: 'config.url is required.' };
  if (typeof url !== 'string') return { param: 'config.url', message: 'config.url must be a string.' };
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { param: 'config.url', message: 'config.url must be an absolute http or https URL.' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { param: 'config.url', message: 'config.url must be an absolute http or https URL.' };
  }
  if (parsed.username || parsed.password) {
    return { param: 'config.url', message: 'config.url must not contain a user name or password; put a bearer token in config.token.' };
  }

  if (token !== undefined) {
    if (typeof token !== 'string') return { param: 'config.token', message: 'config.token must be a string.' };
    if (!/^[\x21-\x7e]+$/.test(token)) {
      return { param: 'config.token', message: 'config.token must be non-empty printable ASCII without spaces.' };
    }
  }

  if (timeout !== undefined && !(Number.isInteger(timeout) && (timeout as number) >= MIN_TIMEOUT_MS && (timeout as number) <= MAX_TIMEOUT_MS)) {
    return { param: 'config.timeout_ms', message: `config.timeout_ms must be an integer from ${MIN_TIMEOUT_MS} to ${MAX_TIMEOUT_MS}.` };
  }
  return null;
}

const unavailable = (message: string): SubmitOutcome => ({ status: 'retryable', code: 'provider_unavailable', message });

export function createHttpProvider(config: HttpConfig, context: ProviderContext): Provider {
  const timeoutMs = config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    'User-Agent': 'Dispatch',
  };
  if (config.token) headers.Authorization = `Bearer ${config.token}`;

  return {
    async submit(message: OutboundMessage): Promise<SubmitOutcome> {
      const payload = {
        message_id: message.messageId,
        to: message.to,
        from: message.from,
        body: message.body,
        encoding: message.encoding,
        segments: message.segments,
        dlr_url: context.dlrUrl,
      };
      // One deadline for connecting, sending, the status line and the body.
      const signal = AbortSignal.timeout(timeoutMs);
      let response: Response;
      try {
        response = await fetch(config.url, {
          method: 'POST',
          headers: { ...headers, 'Idempotency-Key': message.messageId },
          body: JSON.stringify(payload),
          redirect: 'manual',
          signal,
        });
      } catch (error) {
        return unavailable(signal.aborted ? `no answer within ${timeoutMs} ms` : describeNetworkError(error, config.url));
      }

      const { status } = response;
      if (status === 429 || status >= 500) {
        await discard(response);
        return unavailable(`HTTP ${status} from provider`);
      }

      let text: string | null;
      try {
        text = await readBounded(response);
      } catch (error) {
        if (signal.aborted) {
          // 2xx: the provider has probably taken the message, but we could not learn its id.
          if (status >= 200 && status < 300) {
            return { status: 'rejected', code: 'provider_invalid_response', message: `HTTP ${status} from provider, but its body did not arrive within ${timeoutMs} ms` };
          }
          return unavailable(`no answer within ${timeoutMs} ms`);
        }
        if (status >= 200 && status < 300) {
          return { status: 'rejected', code: 'provider_invalid_response', message: `HTTP ${status} from provider, but reading its body failed: ${describeNetworkError(error, config.url)}` };
        }
        text = null;
      }
      const body = parseJson(text);

      if (status >= 200 && status < 300) {
        const id = isObject(body) ? body.id : undefined;
        if (typeof id === 'string' && id.length > 0) return { status: 'accepted', providerMessageId: id };
        return {
          status: 'rejected',
          code: 'provider_invalid_response',
          message: text === null
            ? `HTTP ${status} from provider with a body over ${MAX_RESPONSE_BYTES} bytes`
            : `HTTP ${status} from provider without a message id in its body`,
        };
      }

      // Any other status, 3xx included (redirects are not followed): a hard rejection.
      const error = isObject(body) && isObject(body.error) ? body.error : {};
      return {
        status: 'rejected',
        code: asText(error.code, MAX_CODE_LENGTH) ?? 'provider_rejected',
        message: asText(error.message, MAX_MESSAGE_LENGTH) ?? `HTTP ${status} from provider`,
      };
    },

    async close(): Promise<void> {
      // Each submit owns its request and deadline; nothing outlives it.
    },
  };
}

/** A non-empty string, or a finite number as a string; anything else is not given. */
function asText(value: unknown, max: number): string | undefined {
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' && Number.isFinite(value) ? String(value) : '';
  if (text.length === 0) return undefined;
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function parseJson(text: string | null): unknown {
  if (text === null || text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Reads the body as UTF-8, or null when it is bigger than MAX_RESPONSE_BYTES. Rejects when the deadline passes. */
async function readBounded(response: Response): Promise<string | null> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader.cancel().catch(() => {});
      return null;
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the provider',
  EPIPE: 'connection closed by the provider',
  UND_ERR_SOCKET: 'connection closed by the provider',
  UND_ERR_CLOSED: 'connection closed by the provider',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'no answer in time',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
};

/** Turns what fetch throws into words a person understands ('connection refused', 'host example.test not found'). */
function describeNetworkError(error: unknown, url: string): string {
  const cause = causeOf(error);
  const code = typeof cause.code === 'string' ? cause.code : undefined;
  const host = hostOf(url);
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return `host ${host} not found`;
  if (code === 'EAI_AGAIN' || code === 'EAI_FAIL') return `DNS lookup of ${host} failed`;
  if (code && NETWORK_ERRORS[code]) return NETWORK_ERRORS[code];
  if (code && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/.test(code)) return `TLS certificate of ${host} not accepted (${code})`;
  if (code && (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL'))) return `TLS handshake with ${host} failed (${code})`;
  const detail = (cause.message || (error instanceof Error ? error.message : String(error))).split('\n')[0];
  // fetch refuses a list of well-known ports (1, 6000, 10080, ...) outright.
  if (detail === 'bad port') return `port ${portOf(url)} is one fetch refuses to connect to`;
  return `network error: ${code ? `${code} ` : ''}${detail}`.trim();
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return 'the provider';
  }
}

function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  } catch {
    return '?';
  }
}

/** fetch throws TypeError('fetch failed') with the socket's error as cause, sometimes an AggregateError of several. */
function causeOf(error: unknown): { code?: unknown; message?: string } {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const withCode = current as Error & { code?: unknown; errors?: unknown[] };
    if (typeof withCode.code === 'string') return withCode;
    if (Array.isArray(withCode.errors) && withCode.errors.length > 0) {
      const inner = withCode.errors[0] as { code?: unknown; message?: string };
      if (inner && typeof inner.code === 'string') return inner;
    }
    if (withCode.cause === undefined) return withCode;
    current = withCode.cause;
  }
  return current instanceof Error ? current : { message: String(current) };
}

const REPORT_STATUSES: Record<string, DeliveryReport['status']> = {
  delivered: 'delivered',
  undelivered: 'undelivered',
  // The provider had accepted the message: for Dispatch it is undelivered, not failed to send.
  failed: 'undelivered',
};

/**
 * Reads a delivery report an HTTP provider posted to the route's `dlr_url`:
 * `{ id, status: delivered | undelivered | failed, error_code?, error_message?, timestamp? }`.
 * Null when it is not a report (no id, unknown status, not an object). Optional fields that are
 * malformed are left out rather than losing the status: a timestamp that is neither an ISO
 * date-time with zone nor unix seconds gives no `at`.
 */
export function parseHttpDeliveryReport(body: unknown): DeliveryReport | null {
  if (!isObject(body)) return null;
  const { id, status } = body;
  if (typeof id !== 'string' || id.length === 0) return null;
  if (typeof status !== 'string' || !Object.hasOwn(REPORT_STATUSES, status)) return null;

  const report: DeliveryReport = { providerMessageId: id, status: REPORT_STATUSES[status] };
  if (report.status === 'undelivered') {
    const errorCode = asText(body.error_code, MAX_CODE_LENGTH);
    const errorMessage = asText(body.error_message, MAX_MESSAGE_LENGTH);
    if (errorCode !== undefined) report.errorCode = errorCode;
    if (errorMessage !== undefined) report.errorMessage = errorMessage;
  }
  const at = parseTimestamp(body.timestamp);
  if (at) report.at = at;
  return report;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
/** Unix seconds up to the year 2286; larger values are likely milliseconds and are not guessed at. */
const MAX_UNIX_SECONDS = 9_999_999_999;

function parseTimestamp(value: unknown): Date | undefined {
  if (typeof value === 'number' || (typeof value === 'string' && /^\d{1,10}(\.\d+)?$/.test(value))) {
    const seconds = Number(value);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_UNIX_SECONDS) return undefined;
    return new Date(Math.round(seconds * 1000));
  }
  if (typeof value !== 'string') return undefined;
  const match = ISO_DATE_TIME.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second] = match.map(Number);
  // Reject dates the calendar does not have (2024-02-30), which Date.parse would roll over.
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const at = new Date(value.toUpperCase().replace(' ', 'T'));
  return Number.isNaN(at.getTime()) ? undefined : at;
}
