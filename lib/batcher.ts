interface Waiting<Request, Answer> {
  request: Request;
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<Request, Answer> {
  /** Answers one value per request, in their order; an Error answers its request alone with a refusal. */
  run: (requests: Request[]) => Promise<(Answer | Error)[]>;
  /**
   * When given, a batch that fails as a whole is answered request by request with it, in
   * arrival order, as if each had come alone (a group commit whose one send may not go beside
   * the others); without it, every request of the batch fails with the batch's error.
   */
  runOne?: (request: Request) => Promise<Answer>;
  /** Requests one batch may hold (default: all that wait). */
  maxBatch?: number;
  /** Batches under way at once (default 2). */
  maxInFlight?: number;
}

/**
 * Answers requests in batches, one statement (or transaction) per batch: the requests that
 * arrive in one turn of the event loop go together, and those that arrive while `maxInFlight`
 * batches are under way wait for the next. Under load a request costs a fraction of a round
 * trip; a lone request waits for nothing but the end of its turn.
 */
export class Batcher<Request, Answer> {
  private readonly options: Required<Omit<BatcherOptions<Request, Answer>, 'runOne'>> & Pick<BatcherOptions<Request, Answer>, 'runOne'>;
  private waiting: Waiting<Request, Answer>[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(options: BatcherOptions<Request, Answer>) {
    this.options = { maxBatch: Number.POSITIVE_INFINITY, maxInFlight: 2, ...options };
  }

  submit(request: Request): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.options.maxBatch);
      this.inFlight++;
      void this.answer(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async answer(batch: Waiting<Request, Answer>[]): Promise<void> {
    const { run, runOne } = this.options;
    let answers: (Answer | Error)[];
    try {
      answers = await run(batch.map((waiting) => waiting.request));
    } catch (error) {
      if (!runOne) {
        for (const waiting of batch) waiting.reject(error);
        return;
      }
      for (const waiting of batch) await runOne(waiting.request).then(waiting.resolve, waiting.reject);
      return;
    }
    batch.forEach((waiting, index) => {
      const answer = answers[index];
      if (answer instanceof Error) waiting.reject(answer);
      else waiting.resolve(answer);
    });
  }
}
