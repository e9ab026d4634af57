/**
 * SMSC delivery receipts (SMPP 3.4 Appendix B) turned into delivery reports. Pure functions.
 *
 * The receipt text is a convention, not a format, so the parser is tolerant: keys in any case,
 * `submit date` also as `submit_date`, fields missing or in another order, anything after `text:`
 * ignored. Structured TLVs win over the text: `receipted_message_id` for the id (some SMSCs write
 * the text id in decimal while submit_sm_resp gave it in hex) and `message_state` for the state.
 */
import type { DeliveryReport } from './types.ts';

export interface ReceiptFields {
  id?: string;
  sub?: string;
  dlvrd?: string;
  submitDate?: string;
  doneDate?: string;
  stat?: string;
  err?: string;
  text?: string;
}

const KEYS: Record<string, keyof ReceiptFields> = {
  id: 'id',
  sub: 'sub',
  dlvrd: 'dlvrd',
  submitdate: 'submitDate',
  donedate: 'doneDate',
  stat: 'stat',
  err: 'err',
  text: 'text',
};

const KEY_PATTERN = /(?:^|[\s,;])(id|sub|dlvrd|submit[ _]?date|done[ _]?date|stat|err|text)\s*:/gi;

/** Reads the fields of a receipt text; a field that is missing is left out. */
export function parseReceiptText(text: string): ReceiptFields {
  const fields: ReceiptFields = {};
  const matches = [...text.matchAll(KEY_PATTERN)];
  for (const [i, match] of matches.entries()) {
    const key = KEYS[match[1].toLowerCase().replace(/[ _]/g, '')];
    const start = match.index + match[0].length;
    if (key === 'text') {
      // The original message's first characters: free text that may itself contain "id:".
      fields.text ??= text.slice(start);
      break;
    }
    const end = i + 1 < matches.length ? matches[i + 1].index : text.length;
    const value = text.slice(start, end).trim().split(/\s+/)[0];
    if (value !== '' && fields[key] === undefined) fields[key] = value;
  }
  return fields;
}

/** `yymmddhhmm` or `yymmddhhmmss`, read as UTC; undefined when it is not a real date. */
export function parseReceiptDate(value: string | undefined): Date | undefined {
  const match = value?.match(/^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?$/);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0));
  const date = new Date(Date.UTC(2000 + year, month - 1, day, hour, minute, second));
  const valid =
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second;
  return valid ? date : undefined;
}

/** SMPP 3.4 message_state values, named as receipt texts name them. */
export const MESSAGE_STATES: Readonly<Record<number, string>> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

const DELIVERED = new Set(['DELIVRD', 'DELIVERED']);
const UNDELIVERED = new Set(['UNDELIV', 'UNDELIVERABLE', 'EXPIRED', 'REJECTD', 'REJECTED', 'DELETED', 'UNKNOWN', 'FAILED']);
// ACCEPTD, ENROUTE and anything unrecognised are not final: no report, the message stays sent.

export interface Receipt {
  /** The receipt text (short_message or message_payload), as ASCII. */
  text: string;
  receiptedMessageId?: string;
  messageState?: number;
}

/**
 * The delivery report a receipt stands for, or null when it is not final (ACCEPTD, ENROUTE, an
 * unknown state) or names no message.
 */
export function receiptToReport(receipt: Receipt): DeliveryReport | null {
  const fields = parseReceiptText(receipt.text);
  const providerMessageId = cleanId(receipt.receiptedMessageId) || fields.id;
  const stat = (receipt.messageState !== undefined ? MESSAGE_STATES[receipt.messageState] : undefined) ?? fields.stat;
  if (!providerMessageId || !stat) return null;
  const at = parseReceiptDate(fields.doneDate);
  const normalised = stat.toUpperCase();
  if (DELIVERED.has(normalised)) return { providerMessageId, status: 'delivered', ...(at && { at }) };
  if (!UNDELIVERED.has(normalised)) return null;
  const errorMessage = fields.err === undefined ? `stat:${stat}` : `stat:${stat} err:${fields.err}`;
  return { providerMessageId, status: 'undelivered', errorCode: stat, errorMessage, ...(normalised === 'EXPIRED' && { expired: true }), ...(at && { at }) };
}

/**
 * The smpp package reads a cstring TLV up to the next NUL even past the TLV's length, so an id
 * sent without its terminator drags the next TLV's tag along: cut at the first control byte.
 */
function cleanId(id: string | undefined): string | undefined {
  return id?.replace(/[\x00-\x20\x7f-\uffff][\s\S]*$/, '');
}
