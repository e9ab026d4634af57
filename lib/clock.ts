/**
 * Where the service reads the time of day for its rules (a key's daily limit, a usage period),
 * so that a test can set the hour rather than wait for it.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
