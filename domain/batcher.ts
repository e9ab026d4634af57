/**
 * Group commit for any operation that has a set-based form: an item that arrives while fewer
 * than `maxInFlight` batches are running runs at once (alone, at low load: nothing waits for
 * company); the items that arrive meanwhile wait, and the next batch takes up to `maxBatch` of
 * them. So a batch holds as many items as arrive during one round trip, and an item never waits
 * longer than the batch ahead of it.
 *
 * `runBatch` answers one outcome per item, in order (an Error is that item's own refusal). When
 * it throws, the batch as a whole could not be done, and each item is done alone with `runOne`,
 * in arrival order, as if it had come alone.
 */
interface Waiting<Item, Result> {
  item: Item;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

export class Batcher<Item, Result> {
  readonly #runBatch: (items: Item[]) => Promise<(Result | Error)[]>;
  readonly #runOne: (item: Item) => Promise<Result>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  #waiting: Waiting<Item, Result>[] = [];
  #inFlight = 0;

  constructor(options: { runBatch: (items: Item[]) => Promise<(Result | Error)[]>; runOne: (item: Item) => Promise<Result>; maxBatch: number; maxInFlight: number }) {
    this.#runBatch = options.runBatch;
    this.#runOne = options.runOne;
    this.#maxBatch = options.maxBatch;
    this.#maxInFlight = options.maxInFlight;
  }

  add(item: Item): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#runWaiting();
    });
  }

  #runWaiting(): void {
    while (this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#maxBatch);
      this.#inFlight += 1;
      void this.#run(batch).finally(() => {
        this.#inFlight -= 1;
        this.#runWaiting();
      });
    }
  }

  async #run(batch: Waiting<Item, Result>[]): Promise<void> {
    if (batch.length > 1) {
      const outcomes = await this.#runBatch(batch.map(({ item }) => item)).catch(() => null);
      if (outcomes) {
        batch.forEach((waiting, index) => {
          const outcome = outcomes[index];
          if (outcome instanceof Error) waiting.reject(outcome);
          else waiting.resolve(outcome);
        });
        return;
      }
    }
    for (const waiting of batch) await this.#runOne(waiting.item).then(waiting.resolve, waiting.reject);
  }
}
