// Following GET /inbound-messages, which lists newest first by when Dispatch stored each message
// and filters on that time with an exclusive `created_after` (the messages do not show it: their
// `received_at` is the provider's time, which may be older). Each poll asks for what was stored
// after the floor and yields the messages it has not yielded before, oldest first. The floor
// trails this machine's clock by a window, so that a message committed a little after a newer one
// (or a server clock a little apart from this one) is still caught; ids are remembered while the
// floor could bring them back, so none is yielded twice.
import type { InboundMessage, Page, Query } from '../sdk/index.ts';
import { DEDUPE_WINDOW_MS } from './tail.ts';

export interface InboundTailOptions {
  /** One page of inbound messages stored after `created_after`, newest first (the SDK's inboundMessages.list). */
  list: (query: Required<Pick<Query<'listInboundMessages'>, 'created_after' | 'page'>>) => Promise<Page<InboundMessage>>;
  /** Yield messages stored at or after this time (ms since the epoch). */
  since: number;
  windowMs?: number;
  /** This machine's clock (ms since the epoch). */
  now?: () => number;
}

export class InboundTail {
  readonly #list: InboundTailOptions['list'];
  readonly #windowMs: number;
  readonly #now: () => number;
  /** Messages stored before this are not asked for. */
  #floor: number;
  /** Ids yielded, with the time (this machine's) of the poll that yielded them. */
  readonly #seen = new Map<string, number>();

  constructor(options: InboundTailOptions) {
    this.#list = options.list;
    this.#floor = options.since;
    this.#windowMs = options.windowMs ?? DEDUPE_WINDOW_MS;
    this.#now = options.now ?? Date.now;
  }

  /** The messages stored since the last poll (or since `since`), oldest first. */
  async poll(): Promise<InboundMessage[]> {
    const polledAt = this.#now();
    // created_after is exclusive: one millisecond earlier takes in a message stored at the floor itself.
    const createdAfter = new Date(this.#floor - 1).toISOString();
    const fresh = new Map<string, InboundMessage>();
    for (let page = 1; ; page++) {
      const { data, pagination } = await this.#list({ created_after: createdAfter, page });
      for (const message of data) if (!this.#seen.has(message.id)) fresh.set(message.id, message);
      if (!pagination.has_more || data.length === 0) break;
    }
    for (const id of fresh.keys()) this.#seen.set(id, polledAt);
    this.#floor = Math.max(this.#floor, polledAt - this.#windowMs);
    // A message yielded at time t was stored by t, so a floor past t + window never lists it again.
    for (const [id, seenAt] of this.#seen) if (seenAt < this.#floor - this.#windowMs) this.#seen.delete(id);
    return [...fresh.values()].reverse();
  }
}
