import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadResult } from './load/job.ts';

const LOAD_PROCESS = fileURLToPath(new URL('./load/main.ts', import.meta.url));

/** Runs one load job in a process of its own and answers what it measured. */
export async function runLoad(job: LoadJob): Promise<LoadResult> {
  const child = spawn(process.execPath, [LOAD_PROCESS, JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the load process failed (exit ${code}):\n${stderr.slice(-2000)}`);
  return JSON.parse(stdout) as LoadResult;
}

/**
 * Runs the same load unmeasured for `warmupSeconds` first, then answers the measured run: a read's
 * figure is then of a process that has served it before (its path compiled, its caches filled),
 * as in service, not of the first seconds after a seed.
 */
export async function runLoadWarm(job: LoadJob, warmupSeconds: number): Promise<LoadResult> {
  await runLoad({ ...job, durationSeconds: warmupSeconds });
  return runLoad(job);
}
