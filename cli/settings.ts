// Where the CLI finds Dispatch and its credentials, first match wins:
//   1. flags --url, --api-key, --admin-token;
//   2. environment DISPATCH_URL, DISPATCH_API_KEY, DISPATCH_ADMIN_TOKEN;
//   3. DATA_DIR/credentials.json (DATA_DIR default `.data`), which `npm start` writes in embedded
//      mode, so that the CLI needs no setup on the machine that runs Dispatch.
// The key and token of credentials.json are only used for the server that file describes: a URL
// given by flag or environment never receives them.
import { join } from 'node:path';
import { readCredentials, type Credentials } from '../app/credentials.ts';
import { DEFAULT_BASE_URL } from '../sdk/index.ts';
import { UsageError } from './output.ts';

export interface ConnectionFlags {
  url?: string;
  apiKey?: string;
  adminToken?: string;
}

export interface Connection {
  /** The API base, ending in `/api/v1` unless the URL given had a path of its own. */
  baseUrl: string;
  apiKey: string | undefined;
  adminToken: string | undefined;
  /** The credentials file consulted, when there was one. */
  credentialsFile: string | undefined;
}

export const SETTINGS_HELP = `Connection settings (first match wins):
  1. --url, --api-key, --admin-token
  2. DISPATCH_URL, DISPATCH_API_KEY, DISPATCH_ADMIN_TOKEN
  3. $DATA_DIR/credentials.json (DATA_DIR default .data), written by \`npm start\` in embedded mode
     (its key and token are used only for the URL it names)
  The URL defaults to ${DEFAULT_BASE_URL}; a URL without a path gets /api/v1.`;

/** `http://host:3000` -> `http://host:3000/api/v1`; a URL with a path is kept (without a trailing slash). */
export function normalizeBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`invalid URL "${raw}": expected something like http://127.0.0.1:3000/api/v1`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`invalid URL "${raw}": only http and https are supported`);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/api/v1' : path}`;
}

const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

export async function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const dataDir = env.DATA_DIR || '.data';
  const credentialsFile = join(dataDir, 'credentials.json');
  let saved: Credentials | undefined;
  try {
    saved = await readCredentials(dataDir);
  } catch (error) {
    throw new UsageError(`cannot read ${credentialsFile}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const explicitUrl = nonEmpty(flags.url) ?? nonEmpty(env.DISPATCH_URL);
  const baseUrl = normalizeBaseUrl(explicitUrl ?? saved?.base_url ?? DEFAULT_BASE_URL);
  const fileApplies = saved !== undefined && typeof saved.base_url === 'string' && normalizeBaseUrl(saved.base_url) === baseUrl;
  return {
    baseUrl,
    apiKey: nonEmpty(flags.apiKey) ?? nonEmpty(env.DISPATCH_API_KEY) ?? (fileApplies ? nonEmpty(saved?.api_key) : undefined),
    adminToken: nonEmpty(flags.adminToken) ?? nonEmpty(env.DISPATCH_ADMIN_TOKEN) ?? (fileApplies ? nonEmpty(saved?.admin_token) : undefined),
    credentialsFile: saved === undefined ? undefined : credentialsFile,
  };
}

export function requireApiKey(connection: Connection): string {
  if (connection.apiKey) return connection.apiKey;
  throw new UsageError(`no API key for ${connection.baseUrl}: pass --api-key or set DISPATCH_API_KEY`);
}

export function requireAdminToken(connection: Connection): string {
  if (connection.adminToken) return connection.adminToken;
  throw new UsageError(`no admin token for ${connection.baseUrl}: pass --admin-token or set DISPATCH_ADMIN_TOKEN`);
}
