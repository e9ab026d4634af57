import type { Knex } from 'knex';
import { listenForAuthChanges } from '../db/auth-changes.ts';
import { findKeyByHash, type KeyWithAccount } from '../db/api-keys.ts';
import type { Logger } from './logger.ts';

/**
 * How long an entry may answer without being read again. Announcements make a change take effect
 * at once; this bounds how long one that went unheard (a connection lost without an error) can
 * leave a revoked key working: the operator contract promises at most a second on every process.
 */
export const KEY_CACHE_TTL_MS = 1000;
const MAX_ENTRIES = 10_000;
/**
 * An entry used in the last fifth of its life is read again in the background, so that a key in
 * use never makes a request wait for its lookup, while no entry answers for longer than its time
 * allows. Without it every key in use held up a request each second: at 226 sends a second
 * through 50 keys, 321 lookups in 10 s, so at least one request in seven.
 */
const REFRESH_AHEAD = 1 / 5;

interface Entry {
  found: KeyWithAccount;
  expiresAt: number;
}

/**
 * The key and account rows that authenticate requests, by key hash, so that a request through a
 * key in use costs no lookup. Entries are dropped by account when the database announces a change
 * (see db/auth-changes.ts), and all of them whenever announcements may have been missed. A lookup
 * that started before a drop is not remembered: it may have read the row as it was before the
 * change. Unknown keys are not remembered, so a new key works at once.
 */
export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<KeyWithAccount | undefined>>();
  private readonly load: (hash: Buffer) => Promise<KeyWithAccount | undefined>;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private generation = 0;

  /** `now` reads the clock in milliseconds; a test passes its own, so that a slow read cannot outlast the time given. */
  constructor(load: (hash: Buffer) => Promise<KeyWithAccount | undefined>, ttlMs = KEY_CACHE_TTL_MS, now = () => performance.now()) {
    this.load = load;
    this.ttlMs = ttlMs;
    this.now = now;
  }

  /** The key with this hash and its account, revoked or not; concurrent misses share one lookup. */
  find(hash: Buffer): Promise<KeyWithAccount | undefined> {
    const id = hash.toString('hex');
    const entry = this.entries.get(id);
    const now = this.now();
    if (entry && entry.expiresAt > now) {
      // A failed refresh is left to the lookup that finds the entry expired, which reports it.
      if (entry.expiresAt - now <= this.ttlMs * REFRESH_AHEAD && !this.loading.has(id)) this.fill(id, hash).catch(() => {});
      return Promise.resolve(entry.found);
    }
    return this.loading.get(id) ?? this.fill(id, hash);
  }

  forgetAccount(accountId: string): void {
    this.generation++;
    this.loading.clear();
    for (const [id, entry] of this.entries) if (entry.found.account.id === accountId) this.entries.delete(id);
  }

  clear(): void {
    this.generation++;
    this.loading.clear();
    this.entries.clear();
  }

  private fill(id: string, hash: Buffer): Promise<KeyWithAccount | undefined> {
    const generation = this.generation;
    const expiresAt = this.now() + this.ttlMs;
    const settle = () => {
      if (this.loading.get(id) === loading) this.loading.delete(id);
    };
    const loading = this.load(hash).then(
      (found) => {
        settle();
        if (generation !== this.generation) return found;
        if (found) this.remember(id, { found, expiresAt });
        // A refresh that finds the key gone takes its entry with it.
        else this.entries.delete(id);
        return found;
      },
      (error: unknown) => {
        settle();
        throw error;
      },
    );
    this.loading.set(id, loading);
    return loading;
  }

  private remember(id: string, entry: Entry): void {
    // Re-inserted so that the map stays in load order and the oldest entry goes first when full.
    this.entries.delete(id);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(id, entry);
  }
}

/** A key cache kept current by the database's announcements, for one Dispatch process. */
export async function startKeyCache(
  db: Knex,
  databaseUrl: string,
  logger: Logger,
  options: { ttlMs?: number; retryMs?: number } = {},
): Promise<{ cache: KeyCache; stop: () => Promise<void> }> {
  const ttlMs = options.ttlMs ?? KEY_CACHE_TTL_MS;
  const cache = new KeyCache((hash) => findKeyByHash(db, hash), ttlMs);
  const listener = await listenForAuthChanges(
    databaseUrl,
    {
      onChange: (accountId) => cache.forgetAccount(accountId),
      onReset: () => cache.clear(),
      onLost: (error) =>
        logger.warn(
          { err: error },
          `lost the connection that hears key and account changes; retrying, and until then a key change takes up to ${ttlMs} ms to reach this process`,
        ),
    },
    options.retryMs,
  );
  return { cache, stop: listener.stop };
}
