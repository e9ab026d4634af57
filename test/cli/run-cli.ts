import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, harness } from '../support/harness.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'dispatch.ts');

/** An empty DATA_DIR, so that no credentials.json of the machine leaks into the tests. */
const emptyDataDir = mkdtempSync(join(tmpdir(), 'dispatch-cli-'));
after(() => rmSync(emptyDataDir, { recursive: true, force: true }));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: the live Dispatch of the test run, its admin token, and `apiKey` when given. */
export function cliEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: emptyDataDir, DISPATCH_URL: harness.baseUrl, DISPATCH_ADMIN_TOKEN: ADMIN_TOKEN };
  delete env.DISPATCH_API_KEY;
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

/** Starts `dispatch <args>` with the Node running the tests (Node 24). */
export function startCli(args: string[], env: NodeJS.ProcessEnv = cliEnv()): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env });
}

/** Collects a started CLI's output until it exits. */
export function finished(child: ChildProcessWithoutNullStreams, input?: string): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  if (input !== undefined) child.stdin.end(input);
  else child.stdin.end();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `dispatch <args>` to the end. */
export function cli(args: string[], options: { env?: NodeJS.ProcessEnv; apiKey?: string; input?: string } = {}): Promise<CliResult> {
  const env = options.env ?? cliEnv(options.apiKey === undefined ? {} : { DISPATCH_API_KEY: options.apiKey });
  return finished(startCli(args, env), options.input);
}

/** Runs `dispatch <args> --json`, expects `code`, and answers the parsed stdout. */
export async function cliJson<T = unknown>(args: string[], options: { apiKey?: string; code?: number } = {}): Promise<T> {
  const result = await cli([...args, '--json'], options);
  if (result.code !== (options.code ?? 0)) throw new Error(`dispatch ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return JSON.parse(result.stdout) as T;
}
