/**
 * A deliver_sm that is not a receipt (a handset's message, "MO") read as an inbound delivery.
 * Pure functions.
 *
 * The smpp package has already done part of the work when a PDU arrives: it splits the UDH off
 * short_message and message_payload (when esm_class has UDHI, 0x40) into its information
 * elements, and decodes the text by data_coding: 0 with the GSM 03.38 default alphabet and its
 * extension table, 3 as Latin-1, 8 as UTF-16BE (a surrogate pair split between two parts stays
 * two lone halves, which join again when the parts are joined). It also reads the
 * sar_msg_ref_num / sar_total_segments / sar_segment_seqnum TLVs as numbers. So this module
 * decodes nothing a second time: it picks the text, names the encoding, refuses the data codings
 * Dispatch does not store, and reads the concatenation IEs (00: 8-bit reference, 08: 16-bit),
 * which the package leaves as bytes.
 */
import type { DecodedShortMessage, Pdu } from 'smpp';
import { inboundAddress } from './inbound-address.ts';
import type { InboundDelivery } from './types.ts';

export type InboundPdu = Pick<
  Pdu,
  | 'source_addr'
  | 'source_addr_ton'
  | 'destination_addr'
  | 'dest_addr_ton'
  | 'data_coding'
  | 'short_message'
  | 'message_payload'
  | 'sar_msg_ref_num'
  | 'sar_total_segments'
  | 'sar_segment_seqnum'
>;

export type InboundReading = { ok: true; delivery: InboundDelivery } | { ok: false; reason: string };

const ENCODINGS: ReadonlyMap<number, InboundDelivery['encoding']> = new Map([
  [0x00, 'GSM-7'],
  [0x03, 'Latin-1'],
  [0x08, 'UCS-2'],
]);

const IEI_CONCAT_8BIT = 0x00;
const IEI_CONCAT_16BIT = 0x08;
const TON_NATIONAL = 2;
const ESCAPE = '\x1b';

/** The inbound delivery a non-receipt deliver_sm stands for, or why it cannot be one. */
export function readInboundPdu(pdu: InboundPdu): InboundReading {
  const dataCoding = pdu.data_coding ?? 0;
  const encoding = ENCODINGS.get(dataCoding);
  if (encoding === undefined)
    return { ok: false, reason: `data_coding 0x${dataCoding.toString(16).padStart(2, '0')} is not GSM-7 (0), Latin-1 (3) or UCS-2 (8)` };
  const userData = [pdu.message_payload, pdu.short_message].find(
    (value): value is DecodedShortMessage => value !== undefined && !Buffer.isBuffer(value) && value.message.length > 0,
  );
  const text = userData?.message ?? '';
  // A Buffer here means the package did not decode it: never the case for these data codings.
  if (typeof text !== 'string') return { ok: false, reason: 'the message text could not be decoded' };
  const from = inboundAddress(pdu.source_addr ?? '', pdu.source_addr_ton === TON_NATIONAL);
  if (from === '') return { ok: false, reason: 'no source_addr' };
  const concatenation = udhConcatenation(userData?.udh ?? []) ?? sarConcatenation(pdu);
  if (concatenation && (concatenation.total < 1 || concatenation.sequence < 1 || concatenation.sequence > concatenation.total)) {
    return { ok: false, reason: `concatenation part ${concatenation.sequence} of ${concatenation.total} is not a part` };
  }
  return {
    ok: true,
    delivery: {
      from,
      to: inboundAddress(pdu.destination_addr ?? '', pdu.dest_addr_ton === TON_NATIONAL),
      body: encoding === 'GSM-7' ? withoutUnknownEscapes(text) : text,
      encoding,
      // A "message" of one part is an ordinary message.
      ...(concatenation && concatenation.total > 1 && { concatenation }),
    },
  };
}

/**
 * The concatenation IE of a UDH (the package gives each IE as `iei, length, data...`).
 * 00: reference (1 byte), total, sequence; 08: reference (2 bytes), total, sequence.
 */
export function udhConcatenation(elements: Buffer[]): InboundDelivery['concatenation'] | undefined {
  for (const element of elements) {
    if (element[0] === IEI_CONCAT_8BIT && element[1] === 3 && element.length >= 5) return { reference: element[2], total: element[3], sequence: element[4] };
    if (element[0] === IEI_CONCAT_16BIT && element[1] === 4 && element.length >= 6)
      return { reference: element.readUInt16BE(2), total: element[4], sequence: element[5] };
  }
  return undefined;
}

/** The SMPP 3.4 sar_* TLVs, the other way an SMSC marks a part; all three or nothing. */
function sarConcatenation(pdu: InboundPdu): InboundDelivery['concatenation'] | undefined {
  const { sar_msg_ref_num: reference, sar_total_segments: total, sar_segment_seqnum: sequence } = pdu;
  if (reference === undefined || total === undefined || sequence === undefined) return undefined;
  return { reference, total, sequence };
}

/**
 * The package leaves an escape followed by a code the extension table does not have as ESC plus
 * the basic character; 3GPP TS 23.038 says to show the basic character.
 */
function withoutUnknownEscapes(text: string): string {
  return text.includes(ESCAPE) ? text.replaceAll(ESCAPE, '') : text;
}
