import type { Clock } from '../../lib/clock.ts';

/** The harness's clock: the real time unless a test sets it; reset after every test. */
export class SettableClock {
  #fixed: Date | undefined;

  readonly now: Clock = () => (this.#fixed ? new Date(this.#fixed) : new Date());

  set(at: Date): void {
    this.#fixed = new Date(at);
  }

  reset(): void {
    this.#fixed = undefined;
  }
}
