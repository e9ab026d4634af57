/**
 * The generic HTTP upstream: Dispatch POSTs each message as JSON to the provider's URL, and the
 * provider POSTs delivery reports back to the route's `dlr_url` (parsed by parseHttpDeliveryReport).
 *
 * node:http rather than fetch: the outcome depends on whether the request may have reached the
 * provider (docs/providers.md), and only the socket's connect (or TLS
 * handshake) tells a refused connection apart from one that took the request and then broke.
 */
import http from 'node:http';
import https from 'node:https';
import type { ConfigProblem, DeliveryReport, OutboundMessage, Provider, ProviderContext, SubmitOutcome } from './types.ts';

export interface HttpConfig {
  url: string;
  token?: string;
  /** Deadline for the whole exchange, response body included. Default 5000. */
  timeout_ms?: number;
  /** Read by the domain layer: the provider dedupes on Idempotency-Key, so an unknown outcome is retried here under the same key. */
  idempotent?: boolean;
  /** Read by the domain layer: an unknown outcome fails over anyway, speed before the risk of a duplicate. */
  failover_on_timeout?: boolean;
}

/** What Dispatch POSTs to the provider's URL for each message. */
export interface HttpSubmitPayload {
  message_id: string;
  to: string;
  from: string;
  body: string;
  encoding: OutboundMessage['encoding'];
  segments: number;
  dlr_url: string;
  /** Seconds the provider may keep trying; present when the message has a validity period. */
  validity_period?: number;
}

export const DEFAULT_TIMEOUT_MS = 5000;
const MIN_TIMEOUT_MS = 100;
const MAX_TIMEOUT_MS = 60_000;
const FIELDS = ['url', 'token', 'timeout_ms', 'idempotent', 'failover_on_timeout'];
const BOOLEAN_FIELDS = ['idempotent', 'failover_on_timeout'];

/** Responses are small JSON documents; a bigger body is not read past this. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** Provider texts are carried into the message's error; keep them to a sensible size. */
const MAX_CODE_LENGTH = 100;
const MAX_MESSAGE_LENGTH = 1000;
/**
 * An idle keep-alive connection is closed after this, below the 5 s most servers keep one
 * (Node's default), so that we rarely reuse a connection the provider is closing at that moment.
 * A server that announces `Keep-Alive: timeout=N` shortens it further (Node's Agent reads it).
 */
const IDLE_CONNECTION_MS = 4000;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

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

  const notBoolean = BOOLEAN_FIELDS.find((field) => config[field] !== undefined && typeof config[field] !== 'boolean');
  if (notBoolean) return { param: `config.${notBoolean}`, message: `config.${notBoolean} must be true or false.` };
  return null;
}

const unavailable = (message: string): SubmitOutcome => ({ status: 'retryable', code: 'provider_unavailable', message });
const unknownOutcome = (what: string): SubmitOutcome => ({ status: 'unknown', code: 'provider_timeout', message: `${what}; the provider may have sent it` });
const rejectedStatus = (status: number): SubmitOutcome => ({ status: 'rejected', code: 'provider_rejected', message: `HTTP ${status} from provider` });
const isSuccess = (status: number): boolean => status >= 200 && status < 300;

export function createHttpProvider(config: HttpConfig, context: ProviderContext): Provider {
  const target = new URL(config.url);
  const timeoutMs = config.timeout_ms ?? DEFAULT_TIMEOUT_MS;
  const agentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
  const agent = target.protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    'User-Agent': 'Dispatch',
  };
  if (config.token) headers.Authorization = `Bearer ${config.token}`;

  return {
    submit(message: OutboundMessage): Promise<SubmitOutcome> {
      const payload: HttpSubmitPayload = {
        message_id: message.messageId,
        to: message.to,
        from: message.from,
        body: message.body,
        encoding: message.encoding,
        segments: message.segments,
        dlr_url: context.dlrUrl,
        ...(message.validitySeconds !== undefined && { validity_period: message.validitySeconds }),
      };
      return post(target, agent, { ...headers, 'Idempotency-Key': message.messageId }, Buffer.from(JSON.stringify(payload), 'utf8'), timeoutMs);
    },

    close(): Promise<void> {
      agent.destroy();
      return Promise.resolve();
    },
  };
}

/**
 * One POST, classified by how far it got. Never rejects.
 *
 * - Nothing may have reached the provider (no connection, no TLS session): retryable.
 * - 429 or 5xx: retryable, the provider says it did not take it.
 * - The request may have been read, but no complete answer came (a deadline, a reset, a 2xx whose
 *   body stalls or breaks off): unknown.
 * - A complete answer: accepted or rejected by its status and body.
 */
function post(target: URL, agent: http.Agent, headers: Record<string, string>, body: Buffer, timeoutMs: number): Promise<SubmitOutcome> {
  const secure = target.protocol === 'https:';
  const host = target.hostname;
  return new Promise((resolve) => {
    let settled = false;
    /** Once true, bytes of the request may have reached the provider. */
    let written = false;
    /** The answer's status, once its head has arrived. */
    let status: number | null = null;

    const settle = (outcome: SubmitOutcome): void => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    /** The exchange is over (answered or broken): settle, if it is not yet, and stop the clock. */
    const finish = (outcome: SubmitOutcome): void => {
      clearTimeout(deadline);
      settle(outcome);
    };
    /** The connection broke, or gave up, before the answer was complete. */
    const broken = (what: string): SubmitOutcome => {
      if (status === null) return written ? unknownOutcome(`${what} before it answered`) : unavailable(what);
      if (isSuccess(status)) return unknownOutcome(`HTTP ${status} from provider, but ${what} before its body ended`);
      // A 3xx or 4xx head is already the provider's refusal, whatever happens to its body.
      return rejectedStatus(status);
    };

    const deadline = setTimeout(() => {
      if (status === null) settle(written ? unknownOutcome(`no answer within ${timeoutMs} ms`) : unavailable(`no connection within ${timeoutMs} ms`));
      else if (isSuccess(status)) settle(unknownOutcome(`HTTP ${status} from provider, but its body did not arrive within ${timeoutMs} ms`));
      else settle(rejectedStatus(status));
      request.destroy();
    }, timeoutMs);

    let request: http.ClientRequest;
    try {
      request = (secure ? https.request : http.request)(target, { method: 'POST', headers: { ...headers, 'Content-Length': String(body.length) }, agent });
    } catch (error) {
      // Invalid header values throw before anything is sent.
      finish(unavailable(`invalid request: ${error instanceof Error ? error.message : String(error)}`));
      return;
    }

    request.on('socket', (socket) => {
      // A reused keep-alive connection is open already, so the request may reach the provider at
      // once. If it then fails with ECONNRESET or EPIPE before any byte of an answer, the provider
      // closed the idle connection either before reading the request (nothing sent) or after
      // (perhaps taken): from here the two look alike, so it counts as unknown, the safe side.
      if (request.reusedSocket) written = true;
      else socket.once(secure ? 'secureConnect' : 'connect', () => (written = true));
    });

    // Stays attached after settling: destroying the request may still emit an error.
    request.on('error', (error) => finish(broken(describeNetworkError(error, host))));

    request.on('response', (response) => {
      status = response.statusCode ?? 0;
      response.on('error', () => {}); // 'close' below says what happened
      if (status === 429 || status >= 500) {
        // Settled at once; the body is drained, within the deadline, so the connection can be reused.
        settle(unavailable(`HTTP ${status} from provider`));
        response.on('end', () => clearTimeout(deadline));
        response.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_RESPONSE_BYTES) chunks.push(chunk);
        else if (!settled) {
          finish(answered(status!, null));
          request.destroy();
        }
      });
      response.on('end', () => finish(answered(status!, Buffer.concat(chunks).toString('utf8'))));
      response.on('close', () => {
        if (!response.complete) finish(broken('the connection closed'));
      });
    });

    request.end(body);
  });
}

/** The outcome of a complete answer other than 429 and 5xx; `text` is null when the body was over MAX_RESPONSE_BYTES. */
function answered(status: number, text: string | null): SubmitOutcome {
  const body = parseJson(text);
  if (isSuccess(status)) {
    const id = isObject(body) ? body.id : undefined;
    if (typeof id === 'string' && id.length > 0) return { status: 'accepted', providerMessageId: id };
    // The provider may well have taken the message, but without its id no report can find it.
    return {
      status: 'rejected',
      code: 'provider_invalid_response',
      message:
        text === null
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

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection closed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EHOSTDOWN: 'host down',
};
const TLS_CERTIFICATE = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME|HOSTNAME_MISMATCH/;
const TLS_HANDSHAKE = /^(ERR_TLS_|ERR_SSL_|EPROTO$)/;

/** With happy eyeballs (autoSelectFamily), failing every address of a host gives an AggregateError of the per-address errors. */
function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof AggregateError) return errorCode(error.errors[0]);
  return undefined;
}

/** Words a person understands ('connection refused', 'host example.test not found') for what node:http emits. */
function describeNetworkError(error: unknown, host: string): string {
  const code = errorCode(error);
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0].trim();
  if (code === 'ENOTFOUND' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return `host ${host} not found`;
  if (code === 'EAI_AGAIN' || code === 'EAI_FAIL') return `DNS lookup of ${host} failed`;
  // Node's name for a connection the peer ended without answering.
  if (code === 'ECONNRESET' && message === 'socket hang up') return 'the connection closed';
  if (code && NETWORK_ERRORS[code]) return NETWORK_ERRORS[code];
  if (code?.startsWith('HPE_')) return `the answer was not valid HTTP (${code})`;
  if (code && TLS_CERTIFICATE.test(code)) return `TLS certificate of ${host} not accepted (${code})`;
  if (code && TLS_HANDSHAKE.test(code)) return `TLS handshake with ${host} failed (${code})`;
  return `network error: ${code ? `${code} ` : ''}${message}`.trim();
}

const REPORT_STATUSES: Record<string, DeliveryReport['status']> = {
  delivered: 'delivered',
  undelivered: 'undelivered',
  // The provider had accepted the message: for Dispatch it is undelivered, not failed to send.
  failed: 'undelivered',
  expired: 'undelivered',
};

/**
 * Reads a delivery report an HTTP provider posted to the route's `dlr_url`:
 * `{ id, status: delivered | undelivered | failed | expired, error_code?, error_message?, timestamp? }`.
 * Null when it is not a report (no id, unknown status, not an object). Optional fields that are
 * malformed are left out rather than losing the status: a timestamp that is neither an ISO
 * date-time with zone nor unix seconds gives no `at`.
 */
export function parseHttpDeliveryReport(body: unknown): DeliveryReport | null {
  if (!isObject(body)) return null;
  const { id, status } = body;
  if (typeof id !== 'string' || id.length === 0) return null;
  if (typeof status !== 'string' || !Object.hasOwn(REPORT_STATUSES, status)) return null;

  const report: DeliveryReport = { providerMessageId: id, status: REPORT_STATUSES[status], ...(status === 'expired' && { expired: true }) };
  const messageId = asText(body.message_id, MAX_CODE_LENGTH);
  if (messageId !== undefined) report.messageId = messageId;
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

export function parseTimestamp(value: unknown): Date | undefined {
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
