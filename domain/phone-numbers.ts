import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * The destination country of an E.164 number, or null when the number cannot exist (no
 * country's numbering plan has it). The document's pattern has already checked the format.
 */
export function destinationCountry(e164: string): string | null {
  const parsed = parsePhoneNumberFromString(e164);
  if (!parsed || !parsed.isValid()) return null;
  return parsed.country ?? parsed.countryCallingCode;
}

const E164 = /^\+[1-9][0-9]{1,14}$/;

/** Why a number given as is (a bulk recipient, an imported opt-out) cannot be a recipient; null when it can. */
export function numberProblem(number: string): string | null {
  if (!E164.test(number)) return `The number '${number}' is not an E.164 number such as +447400123456.`;
  if (destinationCountry(number) === null) return `${number} is not a phone number that can exist.`;
  return null;
}
