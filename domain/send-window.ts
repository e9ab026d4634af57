import { timeZonesOfNumber } from '../lib/number-time-zones.ts';
import { ApiError, invalidRequest, missingParameter, unknownParameter } from './errors.ts';

/**
 * The quiet-hours rule: a message with a `send_window` goes only while the recipient's local time
 * is inside [start, end), and otherwise waits for the window's next opening.
 *
 * Decisions this module makes, and the refusals it answers (all 400 invalid_request_error):
 *
 * - Which zones. The recipient's zones come from the number (lib/number-time-zones.ts). A range
 *   the mapping places in several zones (a North American toll-free number, an area code that
 *   straddles a zone line, a country-wide mobile range) must have the window open in EVERY one of
 *   them at once. A number with no zone is refused `send_window_zone_unknown` (param
 *   `send_window`).
 * - `time_zone` wins. When the window names `time_zone`, that zone is used alone, instead of the
 *   number's (not added to them): the sender knows something the prefix does not (a ported or
 *   roaming number, a toll-free line answered in one place), and a field that could only add
 *   zones could never relax a number the mapping spreads over a continent.
 * - start == end is refused (param `send_window.end`): such a window could mean never or always,
 *   and a sender who means always can leave `send_window` out.
 * - A window whose end is before its start crosses midnight: "22:00"-"06:00" is open from 22:00
 *   to 06:00 the next morning. "00:00" as an end means midnight at the end of the day.
 * - Instants, not wall-clock dates. The answer is the earliest instant at or after the given one
 *   at which the local time, read in every zone, is inside the window. On a spring-forward day a
 *   start inside the skipped hour (02:30) therefore opens at the first instant after the gap
 *   (03:00); on a fall-back day a time that happens twice (01:30) opens at its first occurrence,
 *   and the repeated hour counts as inside the window both times.
 * - The horizon. When no instant within 7 days of the given one is inside the window in every
 *   zone (zones whose local days never overlap enough, such as UTC+14 and UTC-12 with a one-hour
 *   window), the answer is the refusal `send_window_unsatisfiable` (param `send_window`, the zones
 *   in `details.time_zones`). A daily window in fixed offsets opens within a day or never, so a
 *   week only adds room for daylight saving time; zones whose windows overlap only in the weeks
 *   when their daylight saving times disagree are refused outside those weeks, rather than held
 *   for months.
 *
 * Local time is read with Intl.DateTimeFormat, whose tz database ships with Node. Each zone's
 * offset is sampled every 6 hours across the horizon and a change is bisected to its instant, so
 * only a zone that changed its offset twice within 6 hours would be misread; no zone in the tz
 * database does.
 */

/** A validated window: times as "HH:MM" (24-hour), and the zone the request named, if any. */
export interface SendWindow {
  readonly start: string;
  readonly end: string;
  readonly time_zone: string | null;
}

const HH_MM = /^([01][0-9]|2[0-3]):([0-5][0-9])$/;
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const HORIZON_MS = 7 * DAY_MS;
const OFFSET_SAMPLE_MS = 6 * HOUR_MS;

function parseTime(param: string, value: unknown): string {
  if (value === undefined || value === null) throw missingParameter(param);
  if (typeof value !== 'string' || !HH_MM.test(value)) {
    throw invalidRequest(param, `${param} is a 24-hour time written HH:MM, such as "09:00"; got ${JSON.stringify(value)}.`);
  }
  return value;
}

/** The zone's canonical IANA name, or null when the runtime's tz database has no such zone. */
function canonicalZone(name: string): string | null {
  // Intl also takes UTC offsets ("+05:00"); the field asks for a zone name.
  if (!/^[A-Za-z]/.test(name)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A request's `send_window`, validated; a refusal names the field at fault. */
export function parseSendWindow(input: unknown): SendWindow {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidRequest('send_window', 'send_window is an object such as {"start": "09:00", "end": "20:00"}.');
  }
  const fields = input as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (key !== 'start' && key !== 'end' && key !== 'time_zone') throw unknownParameter(`send_window.${key}`);
  }
  const start = parseTime('send_window.start', fields.start);
  const end = parseTime('send_window.end', fields.end);
  if (start === end) {
    throw invalidRequest(
      'send_window.end',
      'send_window.end must differ from send_window.start: a window that opens and closes at the same minute is refused; leave send_window out to send at any hour.',
    );
  }
  let timeZone: string | null = null;
  if (fields.time_zone !== undefined && fields.time_zone !== null) {
    timeZone = typeof fields.time_zone === 'string' ? canonicalZone(fields.time_zone) : null;
    if (timeZone === null) {
      throw invalidRequest(
        'send_window.time_zone',
        `send_window.time_zone is an IANA time zone name such as "America/New_York"; got ${JSON.stringify(fields.time_zone)}.`,
      );
    }
  }
  return { start, end, time_zone: timeZone };
}

/**
 * The zones a number's window must hold in: the window's `time_zone` alone when it names one,
 * else every zone of the number's range; or the refusal `send_window_zone_unknown` when the
 * number has none and the window names none.
 */
export function zonesFor(e164: string, window: SendWindow): { zones: string[]; refusal: null } | { zones: null; refusal: ApiError } {
  if (window.time_zone !== null) return { zones: [window.time_zone], refusal: null };
  const zones = timeZonesOfNumber(e164);
  if (zones.length === 0) {
    return {
      zones: null,
      refusal: invalidRequest(
        'send_window',
        `No time zone is known for ${e164}, so its local time cannot be read; name send_window.time_zone to send it within a window.`,
        'send_window_zone_unknown',
      ),
    };
  }
  return { zones, refusal: null };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, formatter);
  }
  return formatter;
}

/** What to add to a UTC instant (ms) to read the wall clock in `zone` at it. */
function offsetAt(zone: string, instant: number): number {
  const second = Math.floor(instant / 1000) * 1000;
  const parts: Record<string, number> = {};
  for (const part of formatterFor(zone).formatToParts(second)) parts[part.type] = Number(part.value);
  return Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) - second;
}

interface Interval {
  readonly from: number;
  readonly to: number;
}

/** The stretches of [from, to) over which `zone` keeps one UTC offset. */
function offsetSegments(zone: string, from: number, to: number): (Interval & { offset: number })[] {
  const segments: (Interval & { offset: number })[] = [];
  let segmentStart = from;
  let offset = offsetAt(zone, from);
  let probed = from;
  while (probed < to) {
    const probe = Math.min(probed + OFFSET_SAMPLE_MS, to);
    const offsetThen = offsetAt(zone, probe);
    if (offsetThen !== offset) {
      let before = probed;
      let after = probe;
      while (after - before > 1) {
        const middle = Math.floor((before + after) / 2);
        if (offsetAt(zone, middle) === offset) before = middle;
        else after = middle;
      }
      segments.push({ from: segmentStart, to: after, offset });
      segmentStart = after;
      offset = offsetThen;
    }
    probed = probe;
  }
  segments.push({ from: segmentStart, to, offset });
  return segments;
}

/** The instants of [from, to) at which the local time in `zone` is inside the window, in order. */
function openIntervals(zone: string, startMs: number, endMs: number, from: number, to: number): Interval[] {
  const open: Interval[] = [];
  const crosses = endMs < startMs;
  for (const segment of offsetSegments(zone, from, to)) {
    const firstDay = Math.floor((segment.from + segment.offset) / DAY_MS) - 1;
    const lastDay = Math.floor((segment.to + segment.offset) / DAY_MS);
    for (let day = firstDay; day <= lastDay; day += 1) {
      const localOpen = day * DAY_MS + startMs;
      const localClose = (crosses ? day + 1 : day) * DAY_MS + endMs;
      const opens = Math.max(localOpen - segment.offset, segment.from);
      const closes = Math.min(localClose - segment.offset, segment.to);
      if (opens < closes) open.push({ from: opens, to: closes });
    }
  }
  return open;
}

/** The instants inside both sorted lists of disjoint intervals. */
function intersect(a: Interval[], b: Interval[]): Interval[] {
  const both: Interval[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const from = Math.max(a[i].from, b[j].from);
    const to = Math.min(a[i].to, b[j].to);
    if (from < to) both.push({ from, to });
    if (a[i].to < b[j].to) i += 1;
    else j += 1;
  }
  return both;
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

function isInside(localMsOfDay: number, startMs: number, endMs: number): boolean {
  return startMs < endMs ? localMsOfDay >= startMs && localMsOfDay < endMs : localMsOfDay >= startMs || localMsOfDay < endMs;
}

/**
 * The earliest instant at or after `at` at which the local time in every one of `zones` is inside
 * the window: `at` itself when it already is. Throws the refusal `send_window_unsatisfiable` when
 * no instant within 7 days is.
 */
export function nextOpening(at: Date, window: SendWindow, zones: readonly string[]): Date {
  const unique = [...new Set(zones)];
  if (unique.length === 0) throw new Error('nextOpening needs at least one time zone; zonesFor answers the refusal for a number with none.');
  const startMs = minutesOf(window.start) * MINUTE_MS;
  const endMs = minutesOf(window.end) * MINUTE_MS;
  const now = at.getTime();

  const localMsOfDay = (zone: string) => {
    const local = now + offsetAt(zone, now);
    return ((local % DAY_MS) + DAY_MS) % DAY_MS;
  };
  if (unique.every((zone) => isInside(localMsOfDay(zone), startMs, endMs))) return new Date(now);

  let open: Interval[] | null = null;
  for (const zone of unique) {
    const zoneOpen = openIntervals(zone, startMs, endMs, now, now + HORIZON_MS);
    open = open === null ? zoneOpen : intersect(open, zoneOpen);
    if (open.length === 0) break;
  }
  if (open === null || open.length === 0) {
    throw new ApiError(
      400,
      'invalid_request_error',
      'send_window_unsatisfiable',
      `send_window ${window.start}-${window.end} is not open in all ${unique.length} of the recipient's time zones at once at any time in the next 7 days; name send_window.time_zone or widen the window.`,
      { param: 'send_window', details: { time_zones: unique } },
    );
  }
  return new Date(open[0].from);
}

/** The window a message was sent within, as it is stored and shown: the zones it held in, and whether it moved the send time. */
export interface AppliedWindow extends SendWindow {
  time_zones: string[];
  delayed: boolean;
}

/**
 * The window a send asks for: its own `send_window`, none when it passes null, else the
 * account's default. Dispatch's own replies (an opt-out's confirmation, a keyword's answer) are
 * sent through no key and go at once.
 */
export function windowOfSend(asked: unknown, accountDefault: SendWindow | null, throughKey: boolean): SendWindow | null {
  if (asked === null) return null;
  if (asked !== undefined) return parseSendWindow(asked);
  return throughKey ? accountDefault : null;
}

/** When a message asked to go at `at` goes under `window` to `to`: `at` itself inside the window, else the window's next opening. */
export function sendTimeInWindow(to: string, window: SendWindow, at: Date): { sendAt: Date; applied: AppliedWindow } {
  const { zones, refusal } = zonesFor(to, window);
  if (refusal) throw refusal;
  const sendAt = nextOpening(at, window, zones);
  return { sendAt, applied: { ...window, time_zones: zones, delayed: sendAt.getTime() > at.getTime() } };
}
