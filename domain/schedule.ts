import { invalidRequest } from './errors.ts';

/** A scheduled message goes at least this far ahead, so that it can still be read and canceled before it goes. */
export const MIN_AHEAD_MS = 60_000;
/** And at most this far ahead. */
export const MAX_AHEAD_MS = 90 * 86_400_000;

/**
 * When a message asked to go at `sendAt` may go: null for at once (no send_at), or the time
 * itself when it is 60 seconds to 90 days after `now`. A time with no zone never reaches here:
 * the document's date-time format requires one.
 */
export function sendTimeOf(sendAt: string | null | undefined, now: Date): Date | null {
  if (sendAt == null) return null;
  const at = new Date(sendAt);
  const ahead = at.getTime() - now.getTime();
  if (Number.isNaN(ahead)) throw invalidRequest('send_at', 'send_at must be a date-time with a time zone, such as 2031-05-20T09:00:00Z.');
  if (ahead < MIN_AHEAD_MS) {
    throw invalidRequest('send_at', `send_at must be at least 60 seconds ahead; it is ${ahead < 0 ? 'in the past' : `${Math.floor(ahead / 1000)} s ahead`}.`);
  }
  if (ahead > MAX_AHEAD_MS) throw invalidRequest('send_at', 'send_at must be at most 90 days ahead.');
  return at;
}
