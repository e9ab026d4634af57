import { hash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { BASE62, randomBase62 } from './ids.ts';

/**
 * The secrets that stand for a caller: API keys and admin operator tokens.
 *
 * The plaintext API key format, after GitHub's token format: a fixed prefix that secret scanners
 * can match, 43 base62 characters of randomness (256 bits) and a 6-character base62 CRC32 of
 * everything before it, so a scanner can tell a real key from a random string without a lookup.
 */
export const KEY_PREFIX = 'ds_live_';
const RANDOM_LENGTH = 43;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function checksum(body: string): string {
  let value = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = KEY_PREFIX + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

/** True when `key` has the shape of a Dispatch key and its checksum holds. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === key.slice(-CHECKSUM_LENGTH);
}

/**
 * API keys and operator tokens carry 256 bits of randomness, so one fast SHA-256 is enough: no
 * slow password hash is needed.
 */
export const hashSecret = (secret: string): Buffer => hash('sha256', secret, 'buffer');

export const hashesEqual = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/**
 * An admin operator's token: a prefix of its own, so that it is told from an API key and from
 * ADMIN_TOKEN before any lookup, and an API key's 256 bits of randomness.
 */
export const OPERATOR_TOKEN_PREFIX = 'op_';
export const generateOperatorToken = (): string => OPERATOR_TOKEN_PREFIX + randomBase62(RANDOM_LENGTH);

/** `ds_live_` then the first four characters after the prefix, `...`, then the last four. */
export const keyHint = (key: string): string => `${KEY_PREFIX}${key.slice(KEY_PREFIX.length, KEY_PREFIX.length + 4)}...${key.slice(-4)}`;
