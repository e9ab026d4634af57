import AjvClass, { type Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import { ValidationContext } from 'openapi-backend';

// RFC 3339 with a mandatory offset; the seconds stop at 59 (a leap second has no timestamp in PostgreSQL or JavaScript).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):([0-5]\d):([0-5]\d)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;

/**
 * A date-time Dispatch can store: RFC 3339, a real calendar day, and an instant from year 1 to
 * 9999 in UTC (PostgreSQL has no year 0, and an offset can move `0001-01-01T00:00:00+01:00`
 * into it).
 */
export function isStorableDateTime(text: string): boolean {
  const match = DATE_TIME.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const calendarDay = new Date(Date.UTC(2000, month - 1, day));
  calendarDay.setUTCFullYear(year);
  if (month < 1 || month > 12 || calendarDay.getUTCMonth() !== month - 1 || calendarDay.getUTCDate() !== day) return false;
  const instant = new Date(text.toUpperCase());
  const utcYear = instant.getUTCFullYear();
  return !Number.isNaN(instant.getTime()) && utcYear >= 1 && utcYear <= 9999;
}

/**
 * The request validator's formats: ajv-formats, with `date-time` narrowed to what can be stored.
 * Path and query parameters the document gives a default are filled in with it (Ajv's
 * useDefaults), so that openapi.yaml is the one place a default is written; bodies are not, as a
 * default filled into a PATCH would change what it leaves alone.
 */
export function customizeRequestAjv(ajv: Ajv, options: Options, context: ValidationContext): Ajv {
  const customized = context === ValidationContext.Params ? new AjvClass.default({ ...options, useDefaults: true }) : ajv;
  addFormats.default(customized);
  customized.addFormat('date-time', { type: 'string', validate: isStorableDateTime });
  return customized;
}
