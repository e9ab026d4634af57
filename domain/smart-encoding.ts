/**
 * Smart encoding: characters that GSM-7 lacks but has a look-alike for are replaced by it, so
 * that a body written with curly quotes, a long dash or a non-breaking space goes as GSM-7 (160
 * characters a segment) rather than UCS-2 (70). LOOK_ALIKES is the one table of replacements;
 * openapi.yaml summarises it (Smart encoding in the introduction).
 *
 * Pure functions, no I/O. Every character of the table is outside the GSM 03.38 alphabet and its
 * extension table, and every replacement is GSM-7 (test/domain/smart-encoding.test.ts checks
 * both), so a character GSM-7 has is never replaced.
 */

import { planSegments, type SegmentPlan } from './encoding.ts';

/** Groups of look-alikes and the GSM-7 text each becomes; '' removes the character. */
const GROUPS: readonly (readonly [lookAlikes: string, replacement: string])[] = [
  // Double quotation marks, double primes and the guillemets.
  ['\u00ab\u00bb\u201c\u201d\u201e\u201f\u2033\u2036\u275d\u275e\u301d\u301e\u301f\uff02\u02ba\u02ee', '"'],
  // Single quotation marks, apostrophes, accents used as apostrophes, primes, single guillemets,
  // and the grave accent (backtick), which GSM-7 lacks.
  ['\u2018\u2019\u201b\u2032\u2035\u2039\u203a\u275b\u275c\uff07\u02b9\u02bb\u02bc\u02bd\u02ca\u02cb\u00b4\u0060\uff40', "'"],
  // Low-9 single quotation mark.
  ['\u201a', ','],
  // Hyphens, dashes and minus signs.
  ['\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u02d7\u2e3a\u2e3b\ufe58\ufe63\uff0d', '-'],
  // Leaders and the ellipsis.
  ['\u2024', '.'],
  ['\u2025', '..'],
  ['\u2026', '...'],
  // Spaces: no-break, Ogham, the typographic spaces U+2000 to U+200A, narrow no-break,
  // medium mathematical and ideographic.
  ['\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000', ' '],
  // Line and paragraph separators.
  ['\u2028\u2029', '\n'],
  // Invisible characters: zero-width space, non-joiner and joiner, word joiner, byte order mark,
  // soft hyphen, and the left-to-right and right-to-left marks.
  ['\u200b\u200c\u200d\u2060\ufeff\u00ad\u200e\u200f', ''],
  // Other punctuation look-alikes: fraction and division slashes, asterisks, modifier letters.
  ['\u2044\u2215', '/'],
  ['\u204e\u2217', '*'],
  ['\u01c3', '!'],
  ['\u02c6', '^'],
  ['\u02dc', '~'],
  // Fullwidth punctuation (its fullwidth grave accent is with the single quotes above).
  ['\uff01', '!'],
  ['\uff03', '#'],
  ['\uff04', '$'],
  ['\uff05', '%'],
  ['\uff06', '&'],
  ['\uff08', '('],
  ['\uff09', ')'],
  ['\uff0a', '*'],
  ['\uff0b', '+'],
  ['\uff0c', ','],
  ['\uff0e', '.'],
  ['\uff0f', '/'],
  ['\uff1a', ':'],
  ['\uff1b', ';'],
  ['\uff1c', '<'],
  ['\uff1d', '='],
  ['\uff1e', '>'],
  ['\uff1f', '?'],
  ['\uff20', '@'],
  ['\uff3b', '['],
  ['\uff3c', '\\'],
  ['\uff3d', ']'],
  ['\uff3e', '^'],
  ['\uff3f', '_'],
  ['\uff5b', '{'],
  ['\uff5c', '|'],
  ['\uff5d', '}'],
  ['\uff5e', '~'],
  // Accented capitals that GSM-7 lacks (it has Ä Å Æ Ç É Ñ Ö Ø Ü), without their accents.
  ['ÀÁÂÃ', 'A'],
  ['ÈÊË', 'E'],
  ['ÌÍÎÏ', 'I'],
  ['ÒÓÔÕ', 'O'],
  ['ÙÚÛ', 'U'],
  ['ÝŸ', 'Y'],
  // Accented small letters that GSM-7 lacks (it has à ä å æ è é ì ñ ò ö ø ù ü), likewise.
  ['áâã', 'a'],
  ['ç', 'c'],
  ['êë', 'e'],
  ['íîï', 'i'],
  ['óôõ', 'o'],
  ['úû', 'u'],
  ['ýÿ', 'y'],
];

/** Each look-alike (one UTF-16 code unit: all are in the Basic Multilingual Plane) and what it becomes. */
export const LOOK_ALIKES: ReadonlyMap<string, string> = new Map(
  GROUPS.flatMap(([lookAlikes, replacement]) => [...lookAlikes].map((ch) => [ch, replacement] as const)),
);

const LOOK_ALIKE_PATTERN = new RegExp(`[${[...LOOK_ALIKES.keys()].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`, 'g');

/** `text` with every look-alike of the table replaced; every other character as it was. */
export function replaceLookAlikes(text: string): string {
  return text.replace(LOOK_ALIKE_PATTERN, (ch) => LOOK_ALIKES.get(ch)!);
}

/** A body as it is sent: the text, its segments, and whether it is the given body with its look-alikes replaced. */
export interface BodyToSend {
  body: string;
  plan: SegmentPlan;
  smartEncoded: boolean;
}

/**
 * The body to send for `given`, planned as `asGiven`, with smart encoding on. The look-alikes are
 * replaced only when that makes the whole body GSM-7, leaves something to send, and takes no more
 * segments than the body as given: replacing in a body that stays UCS-2 would only lose
 * characters (a zero-width joiner holds an emoji sequence together) and could lengthen it (an
 * ellipsis is one UCS-2 unit and three GSM-7 septets), so smart encoding never raises a cost.
 */
export function smartEncode(given: string, asGiven: SegmentPlan): BodyToSend {
  const unchanged = { body: given, plan: asGiven, smartEncoded: false };
  if (asGiven.encoding === 'GSM-7') return unchanged;
  const body = replaceLookAlikes(given);
  if (body === '' || body === given) return unchanged;
  const plan = planSegments(body);
  if (plan.encoding !== 'GSM-7' || plan.segments > asGiven.segments) return unchanged;
  return { body, plan, smartEncoded: true };
}
