import type { Knex } from 'knex';
import { recordKeyUse } from '../db/api-keys.ts';

/**
 * Remembers when each key was last used and writes the times in one batched UPDATE every few
 * seconds, so a request costs no database write. Reads merge the unwritten times in.
 */
export class KeyUsageRecorder {
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;
  private readonly db: Knex;
  private readonly intervalMs: number;
  private readonly onError: (error: unknown) => void;

  constructor(db: Knex, intervalMs: number, onError: (error: unknown) => void) {
    this.db = db;
    this.intervalMs = intervalMs;
    this.onError = onError;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.flush().catch(this.onError);
    }, this.intervalMs);
    this.timer.unref();
  }

  touch(keyId: string, at = new Date()): void {
    this.pending.set(keyId, at);
  }

  /** The last use of a key as far as this process knows: its unwritten time, else the stored one. */
  lastUsed(keyId: string, stored: Date | null): Date | null {
    const unwritten = this.pending.get(keyId);
    if (!unwritten) return stored;
    return stored && stored > unwritten ? stored : unwritten;
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    await recordKeyUse(this.db, batch);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
