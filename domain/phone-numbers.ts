import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * Parsing a number against the numbering plans costs about 10 µs, and a send asks twice (the
 * recipient's check, then the stored message's country): the last numbers asked are kept.
 */
const RECENT_COUNTRIES = 10_000;
const recentCountries = new Map<string, string | null>();

/**
 * The destination country of an E.164 number, or null when the number cannot exist (no
 * country's numbering plan has it). The document's pattern has already checked the format.
 */
export function destinationCountry(e164: string): string | null {
  if (recentCountries.has(e164)) return recentCountries.get(e164) as string | null;
  const parsed = parsePhoneNumberFromString(e164);
  const country = parsed?.isValid() ? (parsed.country ?? parsed.countryCallingCode) : null;
  if (recentCountries.size >= RECENT_COUNTRIES) recentCountries.clear();
  recentCountries.set(e164, country);
  return country;
}

const E164 = /^\+[1-9][0-9]{1,14}$/;

/** Why a number given as is (a bulk recipient, an imported opt-out) cannot be a recipient; null when it can. */
export function numberProblem(number: string): string | null {
  if (!E164.test(number)) return `The number '${number}' is not an E.164 number such as +447400123456.`;
  if (destinationCountry(number) === null) return `${number} is not a phone number that can exist.`;
  return null;
}
