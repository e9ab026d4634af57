import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * The destination country of an E.164 number, or null when the number cannot exist (no
 * country's numbering plan has it). The document's pattern has already checked the format.
 */
function destinationCountry(e164: string): string | null {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed || !parsed.isValid()) return null;
  return parsed.country ?? parsed.countryCallingCode;
}

const E164 = /^\+[1-9][0-9]{1,14}$/;

/**
 * A number given as is (a bulk recipient, an imported opt-out): its destination country, or why
 * it cannot be a recipient. Parsing against the numbering plans costs about 10 µs, so a send
 * checks a number once and keeps the country for the stored message.
 */
export function checkNumber(number: string): { country: string; problem: null } | { country: null; problem: string } {
  if (!E164.test(number)) return { country: null, problem: `The number '${number}' is not an E.164 number such as +447400123456.` };
  const country = destinationCountry(number);
  if (country === null) return { country: null, problem: `${number} is not a phone number that can exist.` };
  return { country, problem: null };
}

/** Why a number given as is cannot be a recipient; null when it can. */
export const numberProblem = (number: string): string | null => checkNumber(number).problem;
