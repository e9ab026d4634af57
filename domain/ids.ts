import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes are drawn from the CSPRNG 4 KiB at a time and handed out once each: a request id
 * is made for every request, and one system call per id cost more than the rest of an
 * authenticated read's Node work on a loaded machine (the profile of GET /account).
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let next = 0;

function randomByte(): number {
  if (next === pool.length) {
    pool = randomBytes(POOL_BYTES);
    next = 0;
  }
  return pool[next++];
}

/** `length` characters drawn uniformly from base62 with a CSPRNG (bytes >= 248 are rejected to avoid modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte < 248) out += BASE62[byte % 62];
  }
  return out;
}

export type IdPrefix = 'acct' | 'snd' | 'key' | 'msg' | 'inb' | 'whe' | 'evt' | 'blk' | 'bulk' | 'wha' | 'req' | 'aud' | 'opr';

/** A resource id: its prefix, an underscore and 24 random base62 characters (about 143 bits: not guessable). */
export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(24)}`;
