import { expect } from 'chai';
import fc from 'fast-check';
import { ApiError } from '../../domain/errors.ts';
import { nextOpening, parseSendWindow, zonesFor } from '../../domain/send-window.ts';
import type { SendWindow } from '../../domain/send-window.ts';

const window = (start: string, end: string, time_zone: string | null = null): SendWindow => ({ start, end, time_zone });

/** The wall clock in `zone` at `instant`, with its UTC offset, so that a repeated hour shows which of the two it is. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function localTime(instant: Date, zone: string): string {
  const formatter = formatters.get(zone) ?? formatters.set(zone, localFormatter(zone)).get(zone)!;
  const parts = formatter.formatToParts(instant);
  const part = (type: string) => parts.find((p) => p.type === type)?.value;
  // ICU writes a zero offset as "GMT" or "GMT+0" depending on its version.
  const offset = part('timeZoneName') === 'GMT' ? 'GMT+0' : part('timeZoneName');
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')}:${part('second')} ${offset}`;
}

function localFormatter(zone: string): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    timeZoneName: 'shortOffset',
  });
}

/** Whether the wall clock in `zone` at `instant` is inside [start, end), read independently of the module. */
function isOpenIn(instant: Date, zone: string, w: SendWindow): boolean {
  const clock = localTime(instant, zone).slice(11, 19);
  return w.start < w.end ? clock >= `${w.start}:00` && clock < `${w.end}:00` : clock >= `${w.start}:00` || clock < `${w.end}:00`;
}

function refusal(attempt: () => unknown): { status: number; code: string; param: string | undefined } {
  try {
    attempt();
  } catch (error) {
    if (error instanceof ApiError) return { status: error.status, code: error.code, param: error.param };
    throw error;
  }
  throw new Error('expected a refusal');
}

const at = (iso: string) => new Date(iso);
const opening = (from: string, w: SendWindow, zones: string[]) => nextOpening(at(from), w, zones).toISOString();

describe('the send window rule', () => {
  describe('parseSendWindow', () => {
    it("returns the window, with the named zone's canonical spelling and null when no zone is named", () => {
      expect(parseSendWindow({ start: '09:00', end: '20:00' })).to.deep.equal(window('09:00', '20:00'));
      expect(parseSendWindow({ start: '22:00', end: '06:00', time_zone: 'europe/london' })).to.deep.equal(window('22:00', '06:00', 'Europe/London'));
      expect(parseSendWindow({ start: '00:00', end: '23:59', time_zone: null })).to.deep.equal(window('00:00', '23:59'));
    });

    it('refuses a time that is not HH:MM on a 24-hour clock, naming the field', () => {
      for (const start of ['9:00', '24:00', '09:60', '09:00:00', '', 9, '0900']) {
        expect(
          refusal(() => parseSendWindow({ start, end: '20:00' })),
          String(start),
        ).to.deep.equal({
          status: 400,
          code: 'parameter_invalid',
          param: 'send_window.start',
        });
      }
      expect(refusal(() => parseSendWindow({ start: '09:00', end: '8pm' }))).to.deep.equal({
        status: 400,
        code: 'parameter_invalid',
        param: 'send_window.end',
      });
    });

    it('refuses a missing start or end, an unknown field and a window that is not an object', () => {
      expect(refusal(() => parseSendWindow({ end: '20:00' }))).to.deep.equal({ status: 400, code: 'parameter_missing', param: 'send_window.start' });
      expect(refusal(() => parseSendWindow({ start: '09:00' }))).to.deep.equal({ status: 400, code: 'parameter_missing', param: 'send_window.end' });
      expect(refusal(() => parseSendWindow({ start: '09:00', end: '20:00', days: ['mon'] }))).to.deep.equal({
        status: 400,
        code: 'parameter_unknown',
        param: 'send_window.days',
      });
      for (const input of ['09:00-20:00', null, ['09:00', '20:00']]) {
        expect(refusal(() => parseSendWindow(input))).to.deep.equal({ status: 400, code: 'parameter_invalid', param: 'send_window' });
      }
    });

    it('refuses a window that opens and closes at the same minute, naming its end', () => {
      expect(refusal(() => parseSendWindow({ start: '09:00', end: '09:00' }))).to.deep.equal({
        status: 400,
        code: 'parameter_invalid',
        param: 'send_window.end',
      });
    });

    it('refuses a time_zone that is not an IANA zone this runtime knows, naming it', () => {
      for (const time_zone of ['Mars/Olympus', 'Etc/Unknown', '+05:00', 'EST5', '', 5]) {
        expect(
          refusal(() => parseSendWindow({ start: '09:00', end: '20:00', time_zone })),
          String(time_zone),
        ).to.deep.equal({
          status: 400,
          code: 'parameter_invalid',
          param: 'send_window.time_zone',
        });
      }
    });
  });

  describe('nextOpening in one zone', () => {
    const NEW_YORK = ['America/New_York'];
    const day = window('09:00', '20:00');

    it('answers the given instant inside the window and the next opening outside it', () => {
      expect(opening('2026-01-15T17:00:00.000Z', day, NEW_YORK)).to.equal('2026-01-15T17:00:00.000Z');
      expect(opening('2026-01-15T12:34:56.789Z', day, NEW_YORK)).to.equal('2026-01-15T14:00:00.000Z');
      expect(opening('2026-01-16T02:00:00.000Z', day, NEW_YORK)).to.equal('2026-01-16T14:00:00.000Z');
    });

    it('is open exactly at its start and closed exactly at its end', () => {
      expect(opening('2026-01-15T14:00:00.000Z', day, NEW_YORK)).to.equal('2026-01-15T14:00:00.000Z');
      expect(opening('2026-01-15T13:59:59.999Z', day, NEW_YORK)).to.equal('2026-01-15T14:00:00.000Z');
      expect(opening('2026-01-16T00:59:59.999Z', day, NEW_YORK)).to.equal('2026-01-16T00:59:59.999Z');
      expect(opening('2026-01-16T01:00:00.000Z', day, NEW_YORK)).to.equal('2026-01-16T14:00:00.000Z');
    });

    it('holds a window that crosses midnight open on both sides of it, and closed between its end and its start', () => {
      const night = window('22:00', '06:00');
      const london = ['Europe/London'];
      expect(opening('2026-01-15T23:30:00.000Z', night, london)).to.equal('2026-01-15T23:30:00.000Z');
      expect(opening('2026-01-16T05:59:59.000Z', night, london)).to.equal('2026-01-16T05:59:59.000Z');
      expect(opening('2026-01-16T22:00:00.000Z', night, london)).to.equal('2026-01-16T22:00:00.000Z');
      expect(opening('2026-01-16T06:00:00.000Z', night, london)).to.equal('2026-01-16T22:00:00.000Z');
      expect(opening('2026-01-16T21:59:00.000Z', night, london)).to.equal('2026-01-16T22:00:00.000Z');
      expect(opening('2026-01-16T12:00:00.000Z', window('09:00', '00:00'), london)).to.equal('2026-01-16T12:00:00.000Z');
      expect(opening('2026-01-16T00:00:00.000Z', window('09:00', '00:00'), london)).to.equal('2026-01-16T09:00:00.000Z');
    });

    it('reads the window in the zone given when it is not UTC', () => {
      expect(opening('2026-01-15T12:00:00.000Z', day, ['Asia/Kathmandu'])).to.equal('2026-01-15T12:00:00.000Z');
      expect(opening('2026-01-15T20:00:00.000Z', day, ['Asia/Kathmandu'])).to.equal('2026-01-16T03:15:00.000Z');
      expect(localTime(at('2026-01-16T03:15:00.000Z'), 'Asia/Kathmandu')).to.equal('2026-01-16 09:00:00 GMT+5:45');
    });
  });

  describe('nextOpening across a change of daylight saving time', () => {
    it('in New York, opens a start the spring-forward gap skips at the first instant after it, and a plain window at the new offset', () => {
      const answer = nextOpening(at('2026-03-08T05:00:00Z'), window('02:30', '05:00'), ['America/New_York']);
      expect(localTime(at('2026-03-08T05:00:00Z'), 'America/New_York')).to.equal('2026-03-08 00:00:00 GMT-5');
      expect(answer.toISOString()).to.equal('2026-03-08T07:00:00.000Z');
      expect(localTime(answer, 'America/New_York')).to.equal('2026-03-08 03:00:00 GMT-4');
      expect(opening('2026-03-08T05:00:00Z', window('09:00', '20:00'), ['America/New_York'])).to.equal('2026-03-08T13:00:00.000Z');
      expect(opening('2026-03-09T01:00:00Z', window('02:30', '05:00'), ['America/New_York'])).to.equal('2026-03-09T06:30:00.000Z');
    });

    it('in New York, opens a time the fall-back repeats at its first occurrence, and counts the repeated hour inside the window both times', () => {
      const answer = nextOpening(at('2026-11-01T04:00:00Z'), window('01:30', '05:00'), ['America/New_York']);
      expect(answer.toISOString()).to.equal('2026-11-01T05:30:00.000Z');
      expect(localTime(answer, 'America/New_York')).to.equal('2026-11-01 01:30:00 GMT-4');
      const second = nextOpening(at('2026-11-01T05:50:00Z'), window('01:30', '01:45'), ['America/New_York']);
      expect(localTime(at('2026-11-01T05:50:00Z'), 'America/New_York')).to.equal('2026-11-01 01:50:00 GMT-4');
      expect(localTime(second, 'America/New_York')).to.equal('2026-11-01 01:30:00 GMT-5');
      expect(opening('2026-11-01T12:00:00Z', window('09:00', '20:00'), ['America/New_York'])).to.equal('2026-11-01T14:00:00.000Z');
    });

    it('in London, across the spring-forward and the fall-back', () => {
      const spring = nextOpening(at('2026-03-29T00:00:00Z'), window('01:30', '03:00'), ['Europe/London']);
      expect(spring.toISOString()).to.equal('2026-03-29T01:00:00.000Z');
      expect(localTime(spring, 'Europe/London')).to.equal('2026-03-29 02:00:00 GMT+1');
      const autumn = nextOpening(at('2026-10-24T23:30:00Z'), window('01:30', '04:00'), ['Europe/London']);
      expect(autumn.toISOString()).to.equal('2026-10-25T00:30:00.000Z');
      expect(localTime(autumn, 'Europe/London')).to.equal('2026-10-25 01:30:00 GMT+1');
      expect(opening('2026-10-25T04:00:00Z', window('09:00', '20:00'), ['Europe/London'])).to.equal('2026-10-25T09:00:00.000Z');
    });

    it('in Sydney, where the clocks go forward in October and back in April', () => {
      const spring = nextOpening(at('2026-10-03T14:00:00Z'), window('02:30', '05:00'), ['Australia/Sydney']);
      expect(localTime(at('2026-10-03T14:00:00Z'), 'Australia/Sydney')).to.equal('2026-10-04 00:00:00 GMT+10');
      expect(spring.toISOString()).to.equal('2026-10-03T16:00:00.000Z');
      expect(localTime(spring, 'Australia/Sydney')).to.equal('2026-10-04 03:00:00 GMT+11');
      const autumn = nextOpening(at('2026-04-04T13:00:00Z'), window('02:30', '05:00'), ['Australia/Sydney']);
      expect(autumn.toISOString()).to.equal('2026-04-04T15:30:00.000Z');
      expect(localTime(autumn, 'Australia/Sydney')).to.equal('2026-04-05 02:30:00 GMT+11');
    });

    it('holds a window that crosses midnight across a change of offset', () => {
      const night = window('22:00', '06:00');
      expect(opening('2026-03-07T20:00:00Z', night, ['America/New_York'])).to.equal('2026-03-08T03:00:00.000Z');
      expect(localTime(at('2026-03-08T03:00:00Z'), 'America/New_York')).to.equal('2026-03-07 22:00:00 GMT-5');
      expect(opening('2026-03-08T09:59:59Z', night, ['America/New_York'])).to.equal('2026-03-08T09:59:59.000Z');
      expect(opening('2026-03-08T10:00:00Z', night, ['America/New_York'])).to.equal('2026-03-09T02:00:00.000Z');
      expect(localTime(at('2026-03-09T02:00:00Z'), 'America/New_York')).to.equal('2026-03-08 22:00:00 GMT-4');
    });
  });

  describe('nextOpening in several zones', () => {
    it('waits until the window is open in every zone at once', () => {
      const zones = ['America/New_York', 'Europe/London'];
      const answer = nextOpening(at('2026-01-15T08:00:00Z'), window('09:00', '20:00'), zones);
      expect(answer.toISOString()).to.equal('2026-01-15T14:00:00.000Z');
      expect(zones.map((zone) => localTime(answer, zone))).to.deep.equal(['2026-01-15 09:00:00 GMT-5', '2026-01-15 14:00:00 GMT+0']);
      expect(opening('2026-01-15T20:00:00Z', window('09:00', '20:00'), zones)).to.equal('2026-01-16T14:00:00.000Z');
    });

    it('holds a number whose range straddles a zone line until the window opens in the later of its zones', () => {
      const w = parseSendWindow({ start: '09:00', end: '17:00' });
      const { zones } = zonesFor('+12085550123', w);
      expect(zones).to.deep.equal(['America/Boise', 'America/Los_Angeles']);
      const answer = nextOpening(at('2026-01-15T15:30:00Z'), w, zones!);
      expect(answer.toISOString()).to.equal('2026-01-15T17:00:00.000Z');
      expect(zones!.map((zone) => localTime(answer, zone))).to.deep.equal(['2026-01-15 10:00:00 GMT-7', '2026-01-15 09:00:00 GMT-8']);
      expect(zones!.every((zone) => isOpenIn(answer, zone, w))).to.equal(true);
      expect(zones!.every((zone) => isOpenIn(new Date(answer.getTime() - 1), zone, w))).to.equal(false);
    });

    it('finds the half hour in January when a North American toll-free number is inside 09:00-20:00 in all its zones, from Guam to Newfoundland', () => {
      const w = parseSendWindow({ start: '09:00', end: '20:00' });
      const { zones } = zonesFor('+18005550100', w);
      expect(zones).to.include.members(['Pacific/Guam', 'Pacific/Pago_Pago', 'America/St_Johns']);
      const answer = nextOpening(at('2026-01-15T12:00:00Z'), w, zones!);
      expect(answer.toISOString()).to.equal('2026-01-15T23:00:00.000Z');
      expect(zones!.filter((zone) => !isOpenIn(answer, zone, w))).to.deep.equal([]);
      expect(localTime(answer, 'Pacific/Guam')).to.equal('2026-01-16 09:00:00 GMT+10');
      expect(localTime(answer, 'America/St_Johns')).to.equal('2026-01-15 19:30:00 GMT-3:30');
      expect(zones!.filter((zone) => !isOpenIn(new Date(answer.getTime() - 1), zone, w))).to.deep.equal(['Pacific/Guam', 'Pacific/Saipan']);
      expect(opening('2026-01-15T23:29:59Z', w, zones!)).to.equal('2026-01-15T23:29:59.000Z');
      expect(opening('2026-01-15T23:30:00Z', w, zones!)).to.equal('2026-01-16T23:00:00.000Z');
    });
  });

  describe('an unsatisfiable window', () => {
    it('is refused send_window_unsatisfiable when no instant within 7 days is inside it in every zone', () => {
      const farApart = ['Pacific/Kiritimati', 'Etc/GMT+12'];
      expect(refusal(() => nextOpening(at('2026-01-15T12:00:00Z'), window('09:00', '10:00'), farApart))).to.deep.equal({
        status: 400,
        code: 'send_window_unsatisfiable',
        param: 'send_window',
      });
      const answer = nextOpening(at('2026-01-15T12:00:00Z'), window('09:00', '12:00'), farApart);
      expect(farApart.map((zone) => localTime(answer, zone))).to.deep.equal(['2026-01-16 11:00:00 GMT+14', '2026-01-15 09:00:00 GMT-12']);
    });

    it('is refused for the toll-free number in July, when Newfoundland is on daylight time and the half hour is gone', () => {
      const w = window('09:00', '20:00');
      const { zones } = zonesFor('+18005550100', w);
      expect(refusal(() => nextOpening(at('2026-07-15T12:00:00Z'), w, zones!))).to.deep.equal({
        status: 400,
        code: 'send_window_unsatisfiable',
        param: 'send_window',
      });
    });
  });

  describe('zonesFor', () => {
    it("answers the number's zones when the window names none", () => {
      expect(zonesFor('+12127654321', window('09:00', '20:00'))).to.deep.equal({ zones: ['America/New_York'], refusal: null });
      expect(zonesFor('+447911234567', window('09:00', '20:00')).zones).to.include('Europe/London');
    });

    it("answers the window's time_zone alone, instead of the number's zones, when it names one", () => {
      expect(zonesFor('+18005550100', window('09:00', '20:00', 'America/Chicago'))).to.deep.equal({ zones: ['America/Chicago'], refusal: null });
      expect(zonesFor('+12127654321', window('09:00', '20:00', 'Asia/Tokyo'))).to.deep.equal({ zones: ['Asia/Tokyo'], refusal: null });
    });

    it('refuses send_window_zone_unknown for a number with no zone, unless the window names time_zone', () => {
      const { zones, refusal: refused } = zonesFor('+80012345678', window('09:00', '20:00'));
      expect(zones).to.equal(null);
      expect({ status: refused?.status, code: refused?.code, param: refused?.param }).to.deep.equal({
        status: 400,
        code: 'send_window_zone_unknown',
        param: 'send_window',
      });
      expect(zonesFor('+80012345678', window('09:00', '20:00', 'Europe/Paris'))).to.deep.equal({ zones: ['Europe/Paris'], refusal: null });
    });
  });

  describe('against a minute-by-minute reading of local time', () => {
    const ZONES = [
      'America/New_York',
      'Europe/London',
      'Australia/Sydney',
      'Australia/Lord_Howe',
      'America/St_Johns',
      'Asia/Kathmandu',
      'Pacific/Chatham',
      'America/Santiago',
      'Asia/Tokyo',
    ];
    /** Instants of 2026 at which some of ZONES change offset; the generated instants cluster around them. */
    const CHANGES = [
      '2026-03-08T07:00:00Z',
      '2026-03-29T01:00:00Z',
      '2026-04-04T16:00:00Z',
      '2026-10-03T16:00:00Z',
      '2026-10-25T01:00:00Z',
      '2026-11-01T06:00:00Z',
      '2026-04-05T03:00:00Z',
      '2026-09-06T04:00:00Z',
    ].map((iso) => Date.parse(iso));
    const hhmm = fc
      .tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
      .map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);

    it('answers an instant open in every zone, with no earlier whole minute (nor the given instant) open in all of them', () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...CHANGES),
          fc.integer({ min: -36 * 3600, max: 36 * 3600 }),
          fc.integer({ min: 0, max: 999 }),
          hhmm,
          hhmm,
          fc.uniqueArray(fc.constantFrom(...ZONES), { minLength: 1, maxLength: 3 }),
          (change, seconds, ms, start, end, zones) => {
            fc.pre(start !== end);
            const w = window(start, end);
            const from = new Date(change + seconds * 1000 + ms);
            const openEverywhere = (instant: Date) => zones.every((zone) => isOpenIn(instant, zone, w));
            let answer: Date | null = null;
            try {
              answer = nextOpening(from, w, zones);
            } catch (error) {
              if (!(error instanceof ApiError) || error.code !== 'send_window_unsatisfiable') throw error;
            }
            const limit = answer ? answer.getTime() : from.getTime() + 7 * 24 * 3600_000;
            if (answer) expect(openEverywhere(answer), `${answer.toISOString()} open in ${zones.join(', ')}`).to.equal(true);
            if (answer?.getTime() === from.getTime()) return;
            expect(openEverywhere(from), `${from.toISOString()} already open`).to.equal(false);
            for (let minute = Math.floor(from.getTime() / 60_000) + 1; minute * 60_000 < limit; minute += 1) {
              const instant = new Date(minute * 60_000);
              if (openEverywhere(instant))
                expect.fail(`${instant.toISOString()} is open in ${zones.join(', ')}, before ${answer?.toISOString() ?? 'the refusal'}`);
            }
          },
        ),
        { numRuns: 60, seed: 20261128 },
      );
    });
  });
});
