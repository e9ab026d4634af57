import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface NodeProcess {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves when it has answered 2xx on `url`, rejects when it exits first or `timeoutMs` passes. */
  waitUntilAnswering: (url: string, timeoutMs?: number) => Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop: (graceMs?: number) => Promise<void>;
  /** SIGSTOP: the process holds its connections and does nothing until `resume`. */
  pause: () => void;
  /** SIGCONT. */
  resume: () => void;
}

/** A TypeScript module run by this Node (npm makes it Node 24) as its own process, with `nodeArgs` for Node itself, its output kept in `logDir/<name>.log`. */
export function startNode(name: string, script: string, args: string[], env: Record<string, string>, logDir: string, nodeArgs: string[] = []): NodeProcess {
  const logFile = join(logDir, `${name}.log`);
  const log = createWriteStream(logFile, { flags: 'a' });
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log, { end: false });
  child.stderr?.pipe(log, { end: false });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const tail = async () => (await readFile(logFile, 'utf8').catch(() => '')).split('\n').slice(-20).join('\n');
  return {
    name,
    pid: child.pid as number,
    logFile,
    async waitUntilAnswering(url, timeoutMs = 90_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (!running()) throw new Error(`${name} exited before it answered on ${url}:\n${await tail()}`);
        const status = await fetch(url, { signal: AbortSignal.timeout(2000) }).then(
          (response) => response.status,
          () => 0,
        );
        if (status >= 200 && status < 300) return;
        if (Date.now() > deadline) throw new Error(`${name} did not answer on ${url} within ${timeoutMs} ms:\n${await tail()}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async stop(graceMs = 20_000) {
      if (running()) {
        child.kill('SIGCONT'); // a paused process would not act on SIGTERM
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      await new Promise<void>((resolve) => log.end(resolve));
    },
  };
}

/** Resident memory of a process in kB, from /proc (Linux). */
export async function residentKb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
}
