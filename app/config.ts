/**
 * What this process does: `all` serves the API and works the background jobs; `api` only serves
 * the API; `worker` only works the jobs (sends, webhooks, inbound binds, reconciliation), with an
 * HTTP server for its probes and metrics. Split, the API's event loop never waits behind a batch
 * of submissions.
 */
export type Role = 'all' | 'api' | 'worker';
export const ROLES: Role[] = ['all', 'api', 'worker'];

/** The environment, read and validated once at start. A bad value stops the process with a message naming the variable. */
export interface Config {
  role: Role;
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  adminToken: string | undefined;
  /** Unset: the address Dispatch listens on, once it listens (PORT may be 0). */
  publicUrl: string | undefined;
  webhookRetrySchedule: number[];
  webhookTimeoutMs: number;
  webhookDisableAfter: number;
  webhookAllowPrivateUrls: boolean;
  trustProxy: boolean;
  logLevel: string;
  /** `json` (one JSON object a line on stdout, for collectors) or `pretty` (for a person at a terminal). */
  logFormat: 'json' | 'pretty';
  /** How long start-up keeps trying to reach DATABASE_URL before it gives up. */
  databaseConnectTimeoutSeconds: number;
  /** When set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** How long parts of a concatenated inbound SMS wait for their siblings before what came is stored, marked incomplete. */
  inboundPartTimeoutSeconds: number;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got '${raw}'`);
  }
  return Number(raw);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`${name} must be 'true' or 'false', got '${raw}'`);
}

function url(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got '${raw}'`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got '${parsed.protocol}'`);
  }
  return raw;
}

function schedule(env: Env): number[] {
  const raw = env.WEBHOOK_RETRY_SCHEDULE;
  if (raw === undefined || raw === '') return [0, 30, 300, 1800, 7200, 43200];
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part)) || parts.length > 20) {
    throw new ConfigError(`WEBHOOK_RETRY_SCHEDULE must be 1 to 20 comma-separated whole seconds, got '${raw}'`);
  }
  return parts.map(Number);
}

export function loadConfig(env: Env = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL ? url('DATABASE_URL', env.DATABASE_URL, ['postgres:', 'postgresql:']) : undefined;
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel}'`);
  const logFormat = env.LOG_FORMAT || 'json';
  if (logFormat !== 'json' && logFormat !== 'pretty') throw new ConfigError(`LOG_FORMAT must be 'json' or 'pretty', got '${logFormat}'`);
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) throw new ConfigError('METRICS_TOKEN must be at least 16 characters long');
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long');
  const role = (env.DISPATCH_ROLE || 'all') as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`DISPATCH_ROLE must be one of ${ROLES.join(', ')}, got '${role}'`);
  // Processes of split roles share one server; an embedded PostgreSQL belongs to one process.
  if (role !== 'all' && databaseUrl === undefined) throw new ConfigError(`DISPATCH_ROLE=${role} needs DATABASE_URL: split roles share one PostgreSQL server`);
  // A worker hands providers the URLs they post reports to: those of the API, which it cannot know.
  if (role === 'worker' && !env.PUBLIC_URL)
    throw new ConfigError("DISPATCH_ROLE=worker needs PUBLIC_URL: the API's public address, where providers post delivery reports and inbound messages");
  return {
    role,
    port,
    host,
    databaseUrl,
    dataDir: env.DATA_DIR || '.data',
    adminToken,
    publicUrl: env.PUBLIC_URL ? url('PUBLIC_URL', env.PUBLIC_URL, ['http:', 'https:']).replace(/\/+$/, '') : undefined,
    webhookRetrySchedule: schedule(env),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
    webhookDisableAfter: integer(env, 'WEBHOOK_DISABLE_AFTER', 25, 1, 10_000),
    webhookAllowPrivateUrls: boolean(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', databaseUrl === undefined),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    logLevel,
    logFormat,
    databaseConnectTimeoutSeconds: integer(env, 'DATABASE_CONNECT_TIMEOUT_SECONDS', 60, 0, 3600),
    metricsToken,
    inboundPartTimeoutSeconds: integer(env, 'INBOUND_PART_TIMEOUT_SECONDS', 300, 1, 86_400),
  };
}
