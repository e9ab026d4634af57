/**
 * Money is exact: amounts travel as decimal strings with at most four fractional digits (the
 * database's numeric(18, 4)) and are added as scaled bigints, never as binary floats.
 */
const SCALE = 4;
const FACTOR = 10n ** BigInt(SCALE);
const DECIMAL = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Parses a decimal (string or number) into ten-thousandths, rounding half away from zero past four places. */
export function toUnits(amount: string | number): bigint {
  const text = typeof amount === 'number' ? amount.toFixed(10) : amount;
  const match = DECIMAL.exec(text);
  if (!match) throw new RangeError(`not a decimal amount: ${amount}`);
  const [, sign, whole, fraction = ''] = match;
  const kept = BigInt(whole + fraction.padEnd(SCALE, '0').slice(0, SCALE));
  const roundsUp = (fraction[SCALE] ?? '0') >= '5';
  const units = kept + (roundsUp ? 1n : 0n);
  return sign ? -units : units;
}

export function fromUnits(units: bigint): string {
  const negative = units < 0n;
  const abs = negative ? -units : units;
  const text = `${abs / FACTOR}.${(abs % FACTOR).toString().padStart(SCALE, '0')}`;
  return negative ? `-${text}` : text;
}

/** The normalised decimal string of an amount, rounded half-up to four places. */
export const toDecimal = (amount: string | number): string => fromUnits(toUnits(amount));

/** The JSON number the API answers for a stored amount (exact up to four decimal places). */
export const toAmount = (amount: string | number): number => Number(toDecimal(amount));

export const multiply = (amount: string, count: number): string => fromUnits(toUnits(amount) * BigInt(count));

/** True when an amount has no more than four decimal places. */
export const hasAtMostFourDecimals = (amount: number): boolean => Math.abs(amount * 10_000 - Math.round(amount * 10_000)) < 1e-6;

export const add = (a: string, b: string): string => fromUnits(toUnits(a) + toUnits(b));

export const negate = (amount: string): string => fromUnits(-toUnits(amount));

export const compare = (a: string, b: string): number => {
  const difference = toUnits(a) - toUnits(b);
  return difference === 0n ? 0 : difference > 0n ? 1 : -1;
};
