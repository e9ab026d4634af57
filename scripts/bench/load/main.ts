/**
 * The load generator, run as its own process (`node scripts/bench/load/main.ts '<job JSON>'`) so
 * that it never shares a CPU thread with Dispatch. Prints one LoadResult as JSON on stdout.
 */
import { writeFile } from 'node:fs/promises';
import { closedLoop } from './closed-loop.ts';
import type { LoadJob } from './job.ts';
import { openLoop } from './open-loop.ts';
import { Recorder } from './recorder.ts';

const job = JSON.parse(process.argv[2]) as LoadJob;
const recorder = new Recorder(job.windowSeconds);
const ids = job.idsFile ? ([] as string[]) : undefined;
const seconds = job.ratePerSecond ? await openLoop(job, recorder, ids) : await closedLoop(job, recorder, ids);
if (job.idsFile) await writeFile(job.idsFile, (ids as string[]).join('\n'));
process.stdout.write(`${JSON.stringify(recorder.result(seconds))}\n`);
