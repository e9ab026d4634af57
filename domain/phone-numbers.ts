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
