import pino from 'pino';

/**
 * Fields that hold a secret wherever they appear: request headers, API keys shown once, webhook
 * signing secrets, route configuration (an HTTP provider's bearer token, an SMPP password), a
 * route's delivery-report token and the URL that carries it, and the operator's token.
 */
const SECRET_FIELDS = [
  'authorization',
  'Authorization',
  'plain_key',
  'plainKey',
  'signing_secret',
  'signingSecret',
  'secret',
  'token',
  'dlr_token',
  'dlrToken',
  'dlr_url',
  'dlrUrl',
  'password',
  'adminToken',
  'admin_token',
];

/** pino's wildcards match one level each: a secret is censored at the top and two levels down (`route.config.token`, `req.headers.authorization`). */
export const REDACTED_PATHS = SECRET_FIELDS.flatMap((field) => [field, `*.${field}`, `*.*.${field}`]);

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/** One JSON record as a line a person reads: time, level, message, then the fields as key=value (an error's stack below). */
export function prettyLine(json: string): string {
  const { level, time, msg, pid: _pid, hostname: _hostname, service: _service, ...fields } = JSON.parse(json) as Record<string, unknown>;
  const stack = (fields.err as { stack?: unknown } | undefined)?.stack;
  if (typeof stack === 'string') fields.err = (fields.err as { message?: unknown }).message;
  const pairs = Object.entries(fields).map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const when = new Date(Number(time)).toISOString().slice(11, 23);
  const message = typeof msg === 'string' ? msg : msg === undefined || msg === null ? '' : JSON.stringify(msg);
  return `${when} ${(LEVEL_NAMES[Number(level)] ?? String(level)).padEnd(5)} ${message}${pairs.length > 0 ? ` ${pairs.join(' ')}` : ''}\n${typeof stack === 'string' ? `${stack}\n` : ''}`;
}

/**
 * Logs on stdout: one JSON object a line (what collectors parse), or with `pretty` the same
 * records as plain lines for a terminal. Secrets never reach a line: the fields above are
 * censored wherever they appear, before either format.
 */
export function createLogger(level: string, destination?: pino.DestinationStream, format: 'json' | 'pretty' = 'json') {
  const out = destination ?? pino.destination({ fd: 1, sync: true });
  return pino(
    {
      level,
      base: { service: 'dispatch' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    format === 'pretty' ? { write: (line: string) => out.write(prettyLine(line)) } : out,
  );
}

export type Logger = ReturnType<typeof createLogger>;
