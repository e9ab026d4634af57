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

/** JSON logs on stdout. Secrets never reach a line: the fields above are censored wherever they appear. */
export function createLogger(level: string, destination?: pino.DestinationStream) {
  return pino(
    {
      level,
      base: { service: 'dispatch' },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

export type Logger = ReturnType<typeof createLogger>;
