/**
 * The GSM 03.38 alphabet, and its unpacked bytes (one byte per septet), the form SMPP carries
 * with data_coding 0. domain/encoding.ts counts septets from the same tables.
 */

/** The default alphabet in table order, 0x00-0x7F; 0x1B is the escape to the extension table. */
export const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅå' +
  'Δ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ' +
  ' !"#¤%&\'()*+,-./' +
  '0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNO' +
  'PQRSTUVWXYZÄÖÑÜ§' +
  '¿abcdefghijklmno' +
  'pqrstuvwxyzäöñüà';

export const GSM7_ESCAPE = 0x1b;

/** Extension characters and the code that follows the escape byte. */
export const GSM7_EXTENSION: ReadonlyMap<string, number> = new Map([
  ['\f', 0x0a],
  ['^', 0x14],
  ['{', 0x28],
  ['}', 0x29],
  ['\\', 0x2f],
  ['[', 0x3c],
  ['~', 0x3d],
  [']', 0x3e],
  ['|', 0x40],
  ['€', 0x65],
]);

const BASIC_CODES: ReadonlyMap<string, number> = new Map([...GSM7_BASIC].map((ch, code) => [ch, code]));
const EXTENSION_CHARS: ReadonlyMap<number, string> = new Map([...GSM7_EXTENSION].map(([ch, code]) => [code, ch]));

/**
 * Encodes GSM-7 text as unpacked GSM 03.38 bytes; an extension character becomes ESC + its code.
 * @throws RangeError on a character outside the alphabet (bodies arrive validated, so this is a bug).
 */
export function encodeGsm7(text: string): Buffer {
  const bytes: number[] = [];
  for (const ch of text) {
    const code = ch === '\x1b' ? undefined : BASIC_CODES.get(ch);
    if (code !== undefined) {
      bytes.push(code);
      continue;
    }
    const extension = GSM7_EXTENSION.get(ch);
    if (extension === undefined) {
      throw new RangeError(`character U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} is not in the GSM 03.38 alphabet`);
    }
    bytes.push(GSM7_ESCAPE, extension);
  }
  return Buffer.from(bytes);
}

/**
 * Maps text that the smpp package decoded as GSM 03.38 back to the bytes it came from (a lone
 * ESC stays 0x1B; anything else outside the table, which the package never produces, becomes '?').
 * Used to read receipts, which SMSCs write in ASCII under data_coding 0.
 */
export function gsm7TextToBytes(text: string): Buffer {
  const bytes: number[] = [];
  for (const ch of text) {
    const code = BASIC_CODES.get(ch);
    if (code !== undefined) bytes.push(code);
    else if (GSM7_EXTENSION.has(ch)) bytes.push(GSM7_ESCAPE, GSM7_EXTENSION.get(ch)!);
    else bytes.push(0x3f);
  }
  return Buffer.from(bytes);
}

/** Decodes unpacked GSM 03.38 bytes (for logs and tests); unknown escapes become a space. */
export function decodeGsm7(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === GSM7_ESCAPE && i + 1 < bytes.length) {
      text += EXTENSION_CHARS.get(bytes[++i]) ?? ' ';
    } else {
      text += GSM7_BASIC[bytes[i] & 0x7f];
    }
  }
  return text;
}
