// What `events tail` and `inbound tail` share: poll, print what is new, pause, until Ctrl-C.
import { EXIT, exitCodeFor, type Output } from './output.ts';

/** Resolves after `ms`, or at once when `stopped` fires. */
function pause(ms: number, stopped: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), stopped]).finally(() => clearTimeout(timer));
}

/** Prints each item `poll` answers (with --json, one JSON object per line) every `intervalMs`, until SIGINT or SIGTERM. */
export async function follow<T>(out: Output, poll: () => Promise<T[]>, line: (item: T) => string, intervalMs: number): Promise<void> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let running = true;
  const onSignal = () => {
    running = false;
    stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let healthy = false;
  try {
    while (running) {
      try {
        for (const item of await poll()) out.item(item, () => line(item));
        healthy = true;
      } catch (error) {
        // Refusals (a bad key, a missing scope) end the tail; once it has worked, an outage is waited out.
        if (!healthy || exitCodeFor(error) !== EXIT.unavailable) throw error;
        out.warn(`${error instanceof Error ? error.message : String(error)}; retrying`);
      }
      await pause(intervalMs, stopped);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
