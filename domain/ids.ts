import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters drawn uniformly from base62 with a CSPRNG (bytes >= 248 are rejected to avoid modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export type IdPrefix = 'acct' | 'snd' | 'key' | 'msg' | 'inb' | 'whe' | 'evt' | 'blk' | 'wha' | 'req' | 'aud';

/** A resource id: its prefix, an underscore and 24 random base62 characters (about 143 bits: not guessable). */
export const newId = (prefix: IdPrefix): string => `${prefix}_${randomBase62(24)}`;
