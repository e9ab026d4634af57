import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What a newcomer needs to make a first call, kept in DATA_DIR/credentials.json (mode 0600). */
export interface Credentials {
  base_url: string;
  api_key?: string;
  admin_token: string;
}

const fileIn = (dataDir: string) => join(dataDir, 'credentials.json');

export async function readCredentials(dataDir: string): Promise<Credentials | undefined> {
  const file = fileIn(dataDir);
  if (!existsSync(file)) return undefined;
  return JSON.parse(await readFile(file, 'utf8')) as Credentials;
}

export async function writeCredentials(dataDir: string, credentials: Credentials): Promise<string> {
  const file = fileIn(dataDir);
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return file;
}
