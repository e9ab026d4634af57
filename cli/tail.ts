// Following GET /events, which lists newest first in offset pages and has no "since" filter.
// Each poll reads back from the newest page until it passes `floor`, and yields the events it has
// not yielded before, oldest first. Events are remembered by id for a window behind the newest
// one seen, so an event is never yielded twice, and events created in the same millisecond, or
// committed a little after newer ones (created_at is the inserting transaction's start), are not
// missed. Pages shifting while they are read only make an event come twice, which the ids absorb.
import type { components } from '../sdk/generated/openapi.ts';
import type { Page } from '../sdk/index.ts';

export type Event = components['schemas']['Event'];

/** How far behind the newest event seen a late-committed event is still caught. */
export const DEDUPE_WINDOW_MS = 10_000;

export interface TailOptions {
  /** One page of events, newest first (the SDK's events.list). */
  list: (page: number) => Promise<Page<Event>>;
  /** Yield events created at or after this time (ms since the epoch). */
  since: number;
  windowMs?: number;
}

const time = (event: Event) => Date.parse(event.created_at);
const chronological = (a: Event, b: Event) => time(a) - time(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class EventTail {
  readonly #list: TailOptions['list'];
  readonly #windowMs: number;
  /** Events older than this are neither yielded nor remembered. */
  #floor: number;
  /** Ids already yielded (or known), with their creation time, for the window. */
  readonly #seen = new Map<string, number>();

  constructor(options: TailOptions) {
    this.#list = options.list;
    this.#floor = options.since;
    this.#windowMs = options.windowMs ?? DEDUPE_WINDOW_MS;
  }

  /** The events created since the last poll (or since `since`), oldest first. */
  async poll(): Promise<Event[]> {
    const fresh = new Map<string, Event>();
    for (let page = 1; ; page++) {
      const { data, pagination } = await this.#list(page);
      for (const event of data) if (time(event) >= this.#floor && !this.#seen.has(event.id)) fresh.set(event.id, event);
      const oldest = data.at(-1);
      if (!pagination.has_more || oldest === undefined || time(oldest) < this.#floor) break;
    }
    let newest = -Infinity;
    for (const event of fresh.values()) this.#seen.set(event.id, time(event));
    for (const created of this.#seen.values()) newest = Math.max(newest, created);
    if (newest !== -Infinity) this.#floor = Math.max(this.#floor, newest - this.#windowMs);
    for (const [id, created] of this.#seen) if (created < this.#floor) this.#seen.delete(id);
    return [...fresh.values()].sort(chronological);
  }
}
