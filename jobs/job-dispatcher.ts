import type { FetchOptions, JobWithMetadata, PgBoss } from 'pg-boss';
import { Batcher } from '../lib/batcher.ts';
import { fetchInTurn, type TurnOptions } from '../db/pg-boss-internals.ts';
import { JOBS_CHANNEL } from '../db/queues.ts';
import { listenFor, type NotificationListener } from '../db/notifications.ts';

export interface DispatchOptions {
  /** Jobs of the queue this process runs at once. */
  concurrency: number;
  /** How often to look for jobs nobody announced: retries whose delay has passed, work missed while not listening. */
  pollMs: number;
  /** pg-boss's own fetch: oldest due job first, each group capped. */
  fetch?: Pick<FetchOptions, 'groupConcurrency' | 'minPriority' | 'maxPriority'>;
  /** Instead, groups and then owners take turns (fetchInTurn). */
  turns?: TurnOptions;
}

export type JobHandler<Data> = (job: JobWithMetadata<Data>) => Promise<void>;

/**
 * Runs the jobs of one queue in this process, up to `concurrency` at once, each on its own: one
 * loop claims as many jobs as there are free slots and starts each at once, so that no job waits
 * for a slower one fetched with it, and an announced job costs one fetch, not one per idle worker
 * (pg-boss's own workers each fetch on every announcement: 32 of them made 32 fetches per job),
 * and a queue may fetch in turns (fetchInTurn), which pg-boss's `work()` cannot. It uses pg-boss's
 * public fetch, complete, fail and touch.
 * A job whose handler throws fails and is retried by its queue's rules; while it runs, its
 * heartbeat is kept, so the job of a process that died runs again within its heartbeat.
 */
class JobDispatcher<Data extends object> {
  private readonly running = new Set<Promise<void>>();
  private stopping = false;
  private woken = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  private readonly boss: PgBoss;
  readonly queue: string;
  private readonly options: DispatchOptions;
  private readonly handle: JobHandler<Data>;
  private readonly onError: (error: unknown) => void;
  /**
   * Jobs that finish together are completed with one statement: a completion per job was about a
   * tenth of the database's statement time while the send worker drained a backlog. A process
   * that dies before a batch commits leaves its jobs to run again, as a death between a handler's
   * end and its completion always could.
   */
  private readonly completions: Batcher<JobWithMetadata<Data>, void>;

  constructor(boss: PgBoss, queue: string, options: DispatchOptions, handle: JobHandler<Data>, onError: (error: unknown) => void) {
    this.boss = boss;
    this.queue = queue;
    this.options = options;
    this.handle = handle;
    this.onError = onError;
    this.completions = new Batcher<JobWithMetadata<Data>, void>({
      run: async (jobs) => {
        await this.boss.complete(this.queue, jobs);
        return jobs.map(() => undefined);
      },
    });
  }

  start(): void {
    this.loop = this.run();
  }

  /** A job may be waiting, or a slot is free: fetch now rather than at the next poll. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Takes no more jobs and waits up to `graceMs` for those running; the rest are left to their heartbeat. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.loop;
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.allSettled(this.running), grace]);
    clearTimeout(timer);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      const free = this.options.concurrency - this.running.size;
      if (free > 0) {
        try {
          const jobs = this.options.turns
            ? await fetchInTurn<Data>(this.boss, this.queue, free, this.options.turns)
            : await this.boss.fetch<Data>(this.queue, { ...this.options.fetch, batchSize: free, includeMetadata: true });
          for (const job of jobs) this.launch(job);
        } catch (error) {
          this.onError(error);
        }
      }
      if (!this.woken && !this.stopping) await this.nap();
    }
  }

  private nap(): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, this.options.pollMs);
      this.wakeUp = done;
    });
  }

  private launch(job: JobWithMetadata<Data>): void {
    const run = this.settle(job).finally(() => {
      this.running.delete(run);
      // A slot is free, and a job of a group at its cap may have become eligible.
      this.wake();
    });
    this.running.add(run);
  }

  private async settle(job: JobWithMetadata<Data>): Promise<void> {
    const heartbeat = job.heartbeatSeconds
      ? setInterval(
          () => {
            this.boss.touch(this.queue, job).catch(this.onError);
          },
          (job.heartbeatSeconds * 1000) / 2,
        )
      : undefined;
    try {
      await this.handle(job);
      await this.completions.submit(job).catch(this.onError);
    } catch (error) {
      const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { message: String(error) };
      await this.boss.fail(this.queue, job, failure).catch(this.onError);
    } finally {
      clearInterval(heartbeat);
    }
  }
}

export interface JobDispatchers {
  /** Starts running the jobs of `queue` in this process. */
  run<Data extends object>(queue: string, options: DispatchOptions, handle: JobHandler<Data>): void;
  /** Takes no more jobs, and waits up to `graceMs` for those running. */
  stop(graceMs: number): Promise<void>;
}

/**
 * The job dispatchers of one process, woken by the announcements of new jobs (JOBS_CHANNEL,
 * written by the enqueuing transaction) on one connection of their own.
 */
export async function startJobDispatchers(boss: PgBoss, databaseUrl: string, onError: (error: unknown) => void): Promise<JobDispatchers> {
  const dispatchers: JobDispatcher<object>[] = [];
  const listener: NotificationListener = await listenFor(databaseUrl, JOBS_CHANNEL, {
    onNotification: (queue) => dispatchers.filter((dispatcher) => dispatcher.queue === queue).forEach((dispatcher) => dispatcher.wake()),
    // Announcements may have been missed: every dispatcher looks once.
    onReset: () => dispatchers.forEach((dispatcher) => dispatcher.wake()),
    onLost: onError,
  });
  return {
    run(queue, options, handle) {
      const dispatcher = new JobDispatcher(boss, queue, options, handle as JobHandler<object>, onError);
      dispatchers.push(dispatcher);
      dispatcher.start();
    },
    async stop(graceMs) {
      await listener.stop();
      await Promise.all(dispatchers.map((dispatcher) => dispatcher.stop(graceMs)));
    },
  };
}
