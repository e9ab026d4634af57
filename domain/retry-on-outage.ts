import { setTimeout as sleep } from 'node:timers/promises';
import { isDatabaseUnavailable } from '../db/availability.ts';

/**
 * Runs `write` until it succeeds while the database is unreachable (1 s doubling to 15 s, for up
 * to `forMs`). For writes that must not be lost once the outside world has acted: an upstream's
 * answer that is recorded nowhere else. Any other error is thrown at once.
 */
export async function retryOnOutage<T>(write: () => Promise<T>, forMs = 10 * 60_000): Promise<T> {
  const deadline = Date.now() + forMs;
  for (let delay = 1000; ; delay = Math.min(delay * 2, 15_000)) {
    try {
      return await write();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + delay > deadline) throw error;
      await sleep(delay);
    }
  }
}
