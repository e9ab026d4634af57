// What every command shares: the common options (--json and the connection flags), argument
// parsers that turn bad values into usage errors, and `run`, which gives an action its output,
// connection and clients, and turns whatever it throws into an error line and an exit code.
import { readFileSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { Dispatch } from '../sdk/index.ts';
import { AdminClient } from './admin-client.ts';
import { EXIT, Output, type ExitCode } from './output.ts';
import { requireAdminToken, requireApiKey, resolveConnection, type Connection, type ConnectionFlags } from './settings.ts';

export interface CommonOptions extends ConnectionFlags {
  json?: boolean;
}

export interface Context {
  out: Output;
  connection: () => Promise<Connection>;
  /** The admin API client (needs an admin token). */
  admin: () => Promise<AdminClient>;
  /** The customer SDK (needs an API key). */
  sdk: () => Promise<Dispatch>;
}

const CONNECTION = 'Connection options:';

export function withJson(command: Command): Command {
  return command.addOption(new Option('--json', 'print the result as JSON on stdout (errors as JSON on stderr)'));
}

/** --json, --url and --admin-token: for the admin operations. */
export function adminOptions(command: Command): Command {
  return withJson(command)
    .addOption(new Option('--url <url>', 'Dispatch base URL [env: DISPATCH_URL]').helpGroup(CONNECTION))
    .addOption(new Option('--admin-token <token>', 'ADMIN_TOKEN or an operator token op_... [env: DISPATCH_ADMIN_TOKEN]').helpGroup(CONNECTION));
}

/** --json, --url and --api-key: for the customer operations. */
export function customerOptions(command: Command): Command {
  return withJson(command)
    .addOption(new Option('--url <url>', 'Dispatch base URL [env: DISPATCH_URL]').helpGroup(CONNECTION))
    .addOption(new Option('--api-key <key>', 'an API key, ds_live_... [env: DISPATCH_API_KEY]').helpGroup(CONNECTION));
}

/**
 * Runs an action: `body` answers an exit code (default 0) or throws; a thrown error is reported on
 * stderr and becomes its exit code. The code is set on process.exitCode (not process.exit), so
 * that stdout is flushed whole into a pipe.
 */
export async function run(command: Command, body: (context: Context) => Promise<ExitCode | void>): Promise<void> {
  const options = command.opts<CommonOptions>();
  const out = new Output(options.json === true);
  let resolved: Promise<Connection> | undefined;
  const connection = () => (resolved ??= resolveConnection(options));
  const context: Context = {
    out,
    connection,
    admin: async () => {
      const settings = await connection();
      return new AdminClient({ baseUrl: settings.baseUrl, token: requireAdminToken(settings) });
    },
    sdk: async () => {
      const settings = await connection();
      return new Dispatch({ apiKey: requireApiKey(settings), baseUrl: settings.baseUrl, userAgent: 'dispatch-cli' });
    },
  };
  try {
    process.exitCode = (await body(context)) ?? EXIT.ok;
  } catch (error) {
    process.exitCode = out.fail(error);
  }
}

// Argument parsers: commander reports an InvalidArgumentError as a usage error (exit 2).

export function number(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError('Not a number.');
  return parsed;
}

export function integer(value: string): number {
  const parsed = number(value);
  if (!Number.isInteger(parsed)) throw new InvalidArgumentError('Not an integer.');
  return parsed;
}

export function positiveInteger(value: string): number {
  const parsed = integer(value);
  if (parsed < 1) throw new InvalidArgumentError('Must be 1 or more.');
  return parsed;
}

/** `a,b, c` -> ['a', 'b', 'c']; an empty string -> []. */
export function list(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** A JSON object, inline or from a file as `@path`. */
export function jsonObject(value: string): Record<string, unknown> {
  let text = value;
  if (value.startsWith('@')) {
    try {
      text = readFileSync(value.slice(1), 'utf8');
    } catch (error) {
      throw new InvalidArgumentError(`Cannot read ${value.slice(1)}: ${(error as Error).message}`);
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`Not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('Expected a JSON object.');
  return parsed as Record<string, unknown>;
}

/** RFC 3339 with seconds and a zone: the form `send_at` takes. */
const ZONED_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** A date-time with its zone, passed on as given: without one, Dispatch could not tell which 09:00 is meant. */
export function zonedTimestamp(value: string): string {
  if (!ZONED_DATE_TIME.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidArgumentError('Not a date-time with a zone (e.g. 2031-05-20T09:00:00Z or 2031-05-20T10:00:00+01:00).');
  return value;
}

export function timestamp(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time)) throw new InvalidArgumentError('Not a date-time (e.g. 2025-11-21T14:00:00Z).');
  return new Date(time).toISOString();
}

/** The date range and page of a list command. */
export interface PageOptions {
  createdAfter?: string;
  createdBefore?: string;
  page?: number;
  limit?: number;
}

/** Adds a list command's date-range and page options; `what` names its items in the help. */
export function pageFlags(command: Command, what: string): Command {
  return command
    .option('--created-after <date-time>', `only ${what} stored after this time`, timestamp)
    .option('--created-before <date-time>', `only ${what} stored before this time`, timestamp)
    .option('--page <n>', 'page number (default 1)', positiveInteger)
    .option('--limit <n>', `${what} per page, 1 to 100 (default 50)`, positiveInteger);
}

/** The date range and page under the API's names, leaving out what was not given. */
export function pageQuery(options: PageOptions): { created_after?: string; created_before?: string; page?: number; limit?: number } {
  return {
    ...(options.createdAfter !== undefined && { created_after: options.createdAfter }),
    ...(options.createdBefore !== undefined && { created_before: options.createdBefore }),
    ...(options.page !== undefined && { page: options.page }),
    ...(options.limit !== undefined && { limit: options.limit }),
  };
}

/** When a send goes and how long it may wait for an upstream: the options of send and bulk. */
export interface ScheduleOptions {
  at?: string;
  validity?: number;
}

/** Adds --at and --validity; `what` names what is sent in the help. */
export function scheduleFlags(command: Command, what: string): Command {
  return command
    .option(
      '--at <date-time>',
      `send ${what} at this time, with a zone (e.g. 2031-05-20T09:00:00Z), 60 seconds to 90 days ahead; checked and charged now, cancelable until then`,
      zonedTimestamp,
    )
    .option(
      '--validity <seconds>',
      `5 to 86400: ${what} not taken by an upstream within this many seconds of its send time fails (expired) and is refunded (default: tried for up to 15 minutes)`,
      positiveInteger,
    );
}

/** --at and --validity under the API's names, leaving out what was not given. */
export function scheduleFields(options: ScheduleOptions): { send_at?: string; validity_period?: number } {
  return {
    ...(options.at !== undefined && { send_at: options.at }),
    ...(options.validity !== undefined && { validity_period: options.validity }),
  };
}

/** The options send and bulk share: the text, its sender and how it goes. */
export interface MessageOptions extends ScheduleOptions {
  from: string;
  body: string;
  reference?: string;
  routeId?: number;
  /** Undefined unless --smart-encoding or --no-smart-encoding is given: the account's setting decides. */
  smartEncoding?: boolean;
}

/** The request fields send and bulk share, from their options; those not given are left out. */
export function messageFields(options: MessageOptions) {
  return {
    from: options.from,
    body: options.body,
    ...(options.reference !== undefined && { reference: options.reference }),
    ...(options.routeId !== undefined && { route_id: options.routeId }),
    ...(options.smartEncoding !== undefined && { smart_encoding: options.smartEncoding }),
    ...scheduleFields(options),
  };
}
