/** The processes a run starts beside the load generator: Dispatch, the fake upstream, the floor server. */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../app/free-port.ts';
import type { Options } from './options.ts';

export type NodeProcess = ReturnType<typeof startNode>;
/** A TypeScript module run by this Node as a process of its own, its output kept in `logDir/<name>.log`. */
export function startNode(name: string, script: string, env: Record<string, string>, logDir: string, nodeArgs: string[] = []) {
  const logFile = join(logDir, `${name}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, script], { env: { ...process.env, ...env }, stdio: ['ignore', log, log] });
  closeSync(log);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = async () => (await readFile(logFile, 'utf8')).split('\n').slice(-20).join('\n');
  return {
    pid: child.pid as number,
    logFile,
    /** Resolves once it answers 2xx on `url`; rejects when it exits first or `timeoutMs` passes. */
    async waitUntilAnswering(url: string, timeoutMs = 90_000): Promise<void> {
      for (const deadline = Date.now() + timeoutMs; ; await new Promise((wake) => setTimeout(wake, 100))) {
        if (!running()) throw new Error(`${name} exited before it answered on ${url}:\n${await tail()}`);
        if ((await fetch(url, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.ok) return;
        if (Date.now() > deadline) throw new Error(`${name} did not answer on ${url} within ${timeoutMs} ms:\n${await tail()}`);
      }
    },
    /** SIGTERM, then SIGKILL after `graceMs`. */
    async stop(graceMs = 20_000): Promise<void> {
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      if (running() && child.kill('SIGTERM')) await exited;
      clearTimeout(timer);
    },
  };
}

export type Upstream = Awaited<ReturnType<typeof startUpstream>>;
/** fake-upstream.ts as a process of its own. */
export async function startUpstream(logDir: string, name = 'fake-upstream') {
  const origin = `http://127.0.0.1:${await freePort()}`;
  const child = startNode(name, fileURLToPath(new URL('./fake-upstream.ts', import.meta.url)), { PORT: new URL(origin).port }, logDir);
  await child.waitUntilAnswering(`${origin}/stats`);
  type Stats = { submits: number; distinct: number; submittedTwice: number; reportsWaiting: number };
  return { submitUrl: `${origin}/sms`, stats: async () => (await (await fetch(`${origin}/stats`)).json()) as Stats, process: child };
}

export type DispatchProcess = Awaited<ReturnType<typeof startDispatch>>;
/** `api`: those serving the API, behind the load generator; `workers`: those working the jobs only, if any. */
export type DispatchProcesses = { api: DispatchProcess[]; workers: DispatchProcess[] };
/** Node's flags that write a process's CPU profile, `<dir>/<name>.cpuprofile`, when it exits. */
export const cpuProfileArgs = (name: string, dir: string | undefined): string[] =>
  dir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`];

/** `node app/main.ts` as `npm start` runs it, but logging at warn: a figure must not pay for log lines. */
async function startDispatch(name: string, env: Record<string, string>, logDir: string, cpuProfileDir: string | undefined) {
  const origin = `http://127.0.0.1:${await freePort()}`;
  const settings = { HOST: '127.0.0.1', PORT: new URL(origin).port, PUBLIC_URL: origin, LOG_LEVEL: 'warn', ...env };
  const child = startNode(name, fileURLToPath(new URL('../../app/main.ts', import.meta.url)), settings, logDir, cpuProfileArgs(name, cpuProfileDir));
  await child.waitUntilAnswering(`${origin}/readyz`);
  const residentKb = async () => Number(/^VmRSS:\s+(\d+) kB/m.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))?.[1]);
  return { origin, baseUrl: `${origin}/api/v1`, process: child, residentKb };
}

/**
 * One after the other, so that the first alone migrates. Workers give providers the first API
 * process's address for their reports; webhook URLs may be private, as the webhooks measurement's
 * receivers listen on this machine.
 */
export async function startDispatchProcesses(options: Options, env: { DATABASE_URL: string; ADMIN_TOKEN: string }, logDir: string) {
  const start = (name: string, role: Record<string, string>) =>
    startDispatch(name, { ...env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', ...role }, logDir, options.cpuProfileDir);
  const processes: DispatchProcesses = { api: [], workers: [] };
  for (let i = 1; i <= options.processes; i++) processes.api.push(await start(`dispatch-${i}`, { DISPATCH_ROLE: options.workerProcesses > 0 ? 'api' : 'all' }));
  for (let i = 1; i <= options.workerProcesses; i++)
    processes.workers.push(await start(`dispatch-worker-${i}`, { DISPATCH_ROLE: 'worker', PUBLIC_URL: processes.api[0].origin }));
  return processes;
}

export const describeProcesses = ({ api, workers }: DispatchProcesses): string =>
  workers.length === 0 ? `${api.length} API and worker process(es)` : `${api.length} API process(es), ${workers.length} worker process(es)`;
