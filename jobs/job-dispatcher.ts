import type { FetchOptions, JobWithMetadata, PgBoss } from 'pg-boss';
import { Batcher } from '../lib/batcher.ts';
import { fetchInTurn, untilNextStart, type TurnOptions } from '../db/pg-boss-internals.ts';
import { announced, JOBS_CHANNEL } from '../db/queues.ts';
import { listenFor, type NotificationListener } from '../db/notifications.ts';

export interface DispatchOptions {
  /** Jobs of the queue this process runs at once. */
  concurrency: number;
  /** How often to look for jobs nobody announced: work missed while not listening, jobs that fell due unforeseen. */
  pollMs: number;
  /** pg-boss's own fetch: oldest due job first, each group capped. */
  fetch?: Pick<FetchOptions, 'groupConcurrency' | 'minPriority' | 'maxPriority'>;
  /** Instead, groups and then owners take turns (fetchInTurn). */
  turns?: TurnOptions;
}

/** How often a dispatcher looks up, unprompted, when its next waiting job falls due (see lookUpNextStart). */
const LOOKUP_MS = 2000;

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
  /** When (by this process's clock) the next job waiting to start falls due, as last looked up, and when that was. */
  private nextStart: number | undefined;
  private lookedUpAt = Number.NEGATIVE_INFINITY;

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

  /** Jobs were created to start later: when the next one falls due is looked up again. */
  expectLater(): void {
    this.lookedUpAt = Number.NEGATIVE_INFINITY;
    this.wake();
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
      // Before the fetch: a job that falls due after the look-up is either fetched or, due only
      // after the fetch, counted in the look-up's answer, so that no job slips between the two.
      await this.lookUpNextStart();
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
      if (!this.woken && !this.stopping) await this.nap(this.untilDue());
    }
  }

  /**
   * pg-boss announces nothing when a job falls due, so when the next job waiting to start falls
   * due is looked up: when jobs to start later were announced, once the time looked up has come,
   * and otherwise (a retry's delay is not announced) at most every LOOKUP_MS or poll, whichever is
   * longer: a short poll fetches due jobs often enough by itself, and need not look up as often.
   */
  private async lookUpNextStart(): Promise<void> {
    const now = Date.now();
    const stale = now - this.lookedUpAt >= Math.max(this.options.pollMs, LOOKUP_MS);
    if (!stale && (this.nextStart === undefined || this.nextStart > now)) return;
    this.lookedUpAt = now;
    try {
      const ms = await untilNextStart(this.boss, this.queue);
      // Counted from the answer, so that the nap ends no earlier than the job falls due.
      this.nextStart = ms === undefined ? undefined : Date.now() + ms;
    } catch (error) {
      this.nextStart = undefined;
      this.onError(error);
    }
  }

  /** How long to sleep when nothing wakes this dispatcher: until the next job waiting to start falls due (a scheduled send goes at its time), at most pollMs. */
  private untilDue(): number {
    return this.nextStart === undefined ? this.options.pollMs : Math.max(0, Math.min(this.options.pollMs, this.nextStart - Date.now()));
  }

  private nap(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
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
    onNotification: (payload) => {
      const { queue, later } = announced(payload);
      for (const dispatcher of dispatchers.filter((candidate) => candidate.queue === queue)) {
        if (later) dispatcher.expectLater();
        else dispatcher.wake();
      }
    },
    // Announcements may have been missed: every dispatcher looks once, and looks up again when its next job falls due.
    onReset: () => dispatchers.forEach((dispatcher) => dispatcher.expectLater()),
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
