import { fileURLToPath } from 'node:url';
import { freePort } from '../../app/free-port.ts';
import { residentKb, startNode, type NodeProcess } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../app/main.ts', import.meta.url));

export interface DispatchProcess {
  origin: string;
  /** The API's base, `<origin>/api/v1` (a worker answers only its probes and metrics). */
  baseUrl: string;
  process: NodeProcess;
  residentKb: () => Promise<number>;
}

export interface DispatchProcesses {
  /** The processes serving the API, behind the load generator. */
  api: DispatchProcess[];
  /** The processes working the jobs only; none when the API processes work them too. */
  workers: DispatchProcess[];
}

/** One process; `publicUrl` undefined: its own address. */
async function startOne(
  name: string,
  env: Record<string, string>,
  publicUrl: string | undefined,
  logDir: string,
  cpuProfileDir: string | undefined,
): Promise<DispatchProcess> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = startNode(
    name,
    MAIN,
    [],
    { ...env, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: publicUrl ?? origin, LOG_LEVEL: 'warn' },
    logDir,
    cpuProfileArgs(name, cpuProfileDir),
  );
  await child.waitUntilAnswering(`${origin}/readyz`);
  return { origin, baseUrl: `${origin}/api/v1`, process: child, residentKb: () => residentKb(child.pid) };
}

/** Node's flags that write a process's CPU profile, `<dir>/<name>.cpuprofile`, when it exits. */
export const cpuProfileArgs = (name: string, dir: string | undefined): string[] =>
  dir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`];

/**
 * `node app/main.ts` as processes of their own on the run's database, started one after the
 * other so that the first one alone migrates: `apiCount` serving the API, then `workerCount`
 * working the jobs (with none, the API processes work them too). Workers hand providers the first
 * API process's address for their reports. Logs at warn: a figure must not pay for log lines.
 * With `cpuProfileDir`, each process writes its CPU profile there when the bench stops it.
 */
export async function startDispatchProcesses(
  apiCount: number,
  workerCount: number,
  databaseUrl: string,
  adminToken: string,
  logDir: string,
  cpuProfileDir?: string,
): Promise<DispatchProcesses> {
  // Private webhook URLs: the webhook target's receivers listen on this machine.
  const common = { DATABASE_URL: databaseUrl, ADMIN_TOKEN: adminToken, WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
  const api: DispatchProcess[] = [];
  for (let i = 1; i <= apiCount; i++) {
    api.push(await startOne(`dispatch-${i}`, { ...common, DISPATCH_ROLE: workerCount > 0 ? 'api' : 'all' }, undefined, logDir, cpuProfileDir));
  }
  const workers: DispatchProcess[] = [];
  for (let i = 1; i <= workerCount; i++) {
    workers.push(await startOne(`dispatch-worker-${i}`, { ...common, DISPATCH_ROLE: 'worker' }, api[0].origin, logDir, cpuProfileDir));
  }
  return { api, workers };
}
