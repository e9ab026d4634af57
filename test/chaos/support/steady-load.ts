import type { CallOutcome } from './timed-call.ts';

/**
 * An open-loop load: one request every `intervalMs` whatever the earlier ones are doing, as
 * independent clients would send. A closed loop would slow down with the server and hide a hang.
 */
export class SteadyLoad {
  readonly outcomes: CallOutcome[] = [];
  #request: (index: number) => Promise<CallOutcome>;
  #intervalMs: number;
  #timer: NodeJS.Timeout | undefined;
  #inFlight = new Set<Promise<void>>();
  #sent = 0;

  constructor(request: (index: number) => Promise<CallOutcome>, intervalMs: number) {
    this.#request = request;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    this.#timer = setInterval(() => {
      const pending: Promise<void> = this.#request(this.#sent++).then((outcome) => {
        this.outcomes.push(outcome);
        this.#inFlight.delete(pending);
      });
      this.#inFlight.add(pending);
    }, this.#intervalMs);
  }

  /** Sends no more, and resolves once every request sent has its outcome. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await Promise.all(this.#inFlight);
  }

  /** Outcomes of requests started at or after `from` (and before `to`). */
  startedBetween(from: number, to = Infinity): CallOutcome[] {
    return this.outcomes.filter((outcome) => outcome.startedAt >= from && outcome.startedAt < to);
  }
}
