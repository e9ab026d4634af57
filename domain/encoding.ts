/**
 * SMS body encoding and segmentation (GSM 03.38 / 3GPP TS 23.038).
 *
 * Pure functions, no I/O. A body is sent as GSM-7 when every character is in
 * the GSM 03.38 default alphabet or its extension table; otherwise it is sent
 * as UCS-2 and measured in UTF-16 code units.
 *
 * Limits:
 *  - GSM-7: a single segment holds 160 septets; a concatenated segment 153
 *    (7 septets go to the user data header).
 *  - UCS-2: a single segment holds 70 units; a concatenated segment 67.
 *
 * Segmentation is greedy and never splits an escape pair (ESC + extension
 * character) or a UTF-16 surrogate pair: such a character moves whole to the
 * next segment, so the segment count can exceed ceil(units / 153) (or / 67).
 * The segment count is always the number of parts actually produced, and
 * `parts.join('') === body` always holds.
 */

import { GSM7_BASIC, GSM7_ESCAPE, GSM7_EXTENSION } from '../providers/gsm7-bytes.ts';

export type Encoding = 'GSM-7' | 'UCS-2';

export interface SegmentPlan {
  encoding: Encoding;
  /** Number of SMS segments; always equal to `parts.length`. */
  segments: number;
  /** Total septets (GSM-7) or UTF-16 code units (UCS-2) of the body. */
  units: number;
  /** The text of each segment, in order; `parts.join('') === body`. */
  parts: string[];
}

/** Maximum body length in Unicode code points (validated elsewhere). */
export const MAX_BODY_CODE_POINTS = 1600;

const GSM7_SINGLE_LIMIT = 160;
const GSM7_MULTI_LIMIT = 153;
const UCS2_SINGLE_LIMIT = 70;
const UCS2_MULTI_LIMIT = 67;

/** The default alphabet without its ESC slot (not a user character): 127 characters. */
const GSM7_BASIC_CHARACTERS = [...GSM7_BASIC].filter((ch) => ch.charCodeAt(0) !== GSM7_ESCAPE).join('');

/** The extension table: each costs two septets (ESC + character). */
const GSM7_EXTENSION_CHARACTERS = [...GSM7_EXTENSION.keys()].join('');

/**
 * Septet cost per UTF-16 code unit: 0 = not GSM-7, 1 = basic, 2 = extension.
 * Every GSM-7 character is in the BMP, so indexing by code unit is exact and
 * any surrogate (cost 0) makes the body UCS-2. Built once at module load.
 */
const SEPTET_COST: Uint8Array = buildSeptetCostTable();

function buildSeptetCostTable(): Uint8Array {
  let max = 0;
  for (const ch of GSM7_BASIC_CHARACTERS + GSM7_EXTENSION_CHARACTERS) max = Math.max(max, ch.charCodeAt(0));
  const table = new Uint8Array(max + 1);
  for (const ch of GSM7_BASIC_CHARACTERS) table[ch.charCodeAt(0)] = 1;
  for (const ch of GSM7_EXTENSION_CHARACTERS) table[ch.charCodeAt(0)] = 2;
  return table;
}

function septetCost(codeUnit: number): number {
  return codeUnit < SEPTET_COST.length ? SEPTET_COST[codeUnit] : 0;
}

function isHighSurrogate(codeUnit: number): boolean {
  return codeUnit >= 0xd800 && codeUnit <= 0xdbff;
}

function isLowSurrogate(codeUnit: number): boolean {
  return codeUnit >= 0xdc00 && codeUnit <= 0xdfff;
}

/**
 * Number of Unicode code points, identical to `[...body].length` (a lone
 * surrogate counts as one), without allocating an array.
 */
export function codePointLength(body: string): number {
  const n = body.length;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (isHighSurrogate(body.charCodeAt(i)) && i + 1 < n && isLowSurrogate(body.charCodeAt(i + 1))) i++;
    count++;
  }
  return count;
}

export function detectEncoding(body: string): Encoding {
  for (let i = 0; i < body.length; i++) {
    if (septetCost(body.charCodeAt(i)) === 0) return 'UCS-2';
  }
  return 'GSM-7';
}

/**
 * Total septets of a GSM-7 body (extension characters count two).
 * @throws RangeError if the body contains a character outside GSM 03.38.
 */
export function gsm7Septets(body: string): number {
  let septets = 0;
  for (let i = 0; i < body.length; i++) {
    const cost = septetCost(body.charCodeAt(i));
    if (cost === 0) {
      const cp = body.codePointAt(i)!;
      throw new RangeError(`character U+${cp.toString(16).toUpperCase().padStart(4, '0')} at index ${i} is not in the GSM 03.38 alphabet`);
    }
    septets += cost;
  }
  return septets;
}

/**
 * Greedy GSM-7 segmentation in one pass. Returns null as soon as a non-GSM
 * character is seen (the caller then falls back to UCS-2).
 *
 * Parts are cut at the multi-segment limit while the total is accumulated; if
 * the total turns out to fit a single segment, the whole body is one part.
 */
function planGsm7(body: string): SegmentPlan | null {
  const parts: string[] = [];
  let total = 0;
  let inSegment = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const cost = septetCost(body.charCodeAt(i));
    if (cost === 0) return null;
    if (inSegment + cost > GSM7_MULTI_LIMIT) {
      // An escape pair that would straddle the boundary moves whole.
      parts.push(body.slice(start, i));
      start = i;
      inSegment = 0;
    }
    inSegment += cost;
    total += cost;
  }
  if (total <= GSM7_SINGLE_LIMIT) return { encoding: 'GSM-7', segments: 1, units: total, parts: [body] };
  parts.push(body.slice(start));
  return { encoding: 'GSM-7', segments: parts.length, units: total, parts };
}

/**
 * Greedy UCS-2 segmentation in one pass over UTF-16 code units. A valid
 * surrogate pair is one two-unit character and never straddles a boundary;
 * a lone surrogate is treated as a one-unit character.
 */
function planUcs2(body: string): SegmentPlan {
  const n = body.length;
  const parts: string[] = [];
  let inSegment = 0;
  let start = 0;
  let i = 0;
  while (i < n) {
    const width = isHighSurrogate(body.charCodeAt(i)) && i + 1 < n && isLowSurrogate(body.charCodeAt(i + 1)) ? 2 : 1;
    if (inSegment + width > UCS2_MULTI_LIMIT) {
      parts.push(body.slice(start, i));
      start = i;
      inSegment = 0;
    }
    inSegment += width;
    i += width;
  }
  if (n <= UCS2_SINGLE_LIMIT) return { encoding: 'UCS-2', segments: 1, units: n, parts: [body] };
  parts.push(body.slice(start));
  return { encoding: 'UCS-2', segments: parts.length, units: n, parts };
}

/**
 * Plans how the service splits `body` into SMS segments.
 *
 * An empty body (rejected by validation elsewhere) is planned consistently
 * as GSM-7, 0 units, 1 segment with a single empty part.
 */
export function planSegments(body: string): SegmentPlan {
  return planGsm7(body) ?? planUcs2(body);
}

/** The characters that make a body UCS-2 (outside GSM 03.38), each with its position in code points. */
export function ucs2Characters(body: string): { character: string; position: number }[] {
  return [...body].flatMap((character, position) => (character.length > 1 || septetCost(character.charCodeAt(0)) === 0 ? [{ character, position }] : []));
}
