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
