import { randomInt } from 'node:crypto';

/**
 * Numbers unique to a test: the database is shared by the whole run and a number is approved
 * for one account at a time. +1 212 7xx xxxx numbers are valid (they can be sent to).
 */
export const randomLongCode = (): string => `+12127${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
export const randomShortCode = (): string => String(randomInt(10_000_000, 100_000_000));
/** A handset's number, as randomLongCode. */
export const randomHandset = randomLongCode;
