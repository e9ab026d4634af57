import { expect } from 'chai';
import smpp from 'smpp';
import type { Pdu } from 'smpp';
import { readInboundPdu, udhConcatenation } from '../../providers/smpp-inbound.ts';

/** A deliver_sm as the ESME's side of the smpp package reads it off the wire. */
function received(fields: Record<string, unknown>): Pdu {
  const sent = new smpp.PDU('deliver_sm', {
    source_addr_ton: 1,
    source_addr_npi: 1,
    source_addr: '447911123456',
    dest_addr_ton: 1,
    dest_addr_npi: 1,
    destination_addr: '447911223344',
    ...fields,
  });
  return new smpp.PDU(sent.toBuffer() as never);
}

const ucs2 = (text: string) => Buffer.from(text, 'utf16le').swap16();

function read(fields: Record<string, unknown>) {
  const reading = readInboundPdu(received(fields));
  if (!reading.ok) throw new Error(`not read: ${reading.reason}`);
  return reading.delivery;
}

describe('reading an SMPP deliver_sm as an inbound message', () => {
  it('decodes GSM-7 (data_coding 0) with the extension table exactly', () => {
    // "Price: 5€ {a|b} [x] ~^\ @£" in unpacked GSM 03.38, each extension character as ESC + code.
    const bytes = Buffer.from([
      0x50, 0x72, 0x69, 0x63, 0x65, 0x3a, 0x20, 0x35, 0x1b, 0x65, 0x20, 0x1b, 0x28, 0x61, 0x1b, 0x40, 0x62, 0x1b, 0x29, 0x20, 0x1b, 0x3c, 0x78, 0x1b, 0x3e,
      0x20, 0x1b, 0x3d, 0x1b, 0x14, 0x1b, 0x2f, 0x20, 0x00, 0x01, 0x1b, 0x0a,
    ]);
    const delivery = read({ data_coding: 0, short_message: bytes });
    expect(delivery).to.deep.equal({ from: '+447911123456', to: '+447911223344', body: 'Price: 5€ {a|b} [x] ~^\\ @£\f', encoding: 'GSM-7' });
  });

  it('shows the basic character for an escape the extension table does not have', () => {
    expect(read({ data_coding: 0, short_message: Buffer.from([0x1b, 0x41, 0x42]) }).body).to.equal('AB');
  });

  it('decodes Latin-1 (data_coding 3) exactly, from short_message or message_payload', () => {
    const text = 'Café crème, ÿ ± ¿ ß';
    expect(read({ data_coding: 3, short_message: Buffer.from(text, 'latin1') })).to.include({ body: text, encoding: 'Latin-1' });
    expect(read({ data_coding: 3, message_payload: Buffer.from(text, 'latin1') })).to.include({ body: text, encoding: 'Latin-1' });
  });

  it('decodes UCS-2 (data_coding 8), keeping half of a surrogate pair split between parts so the parts join exactly', () => {
    const whole = 'Привет 😀 мир';
    const units = ucs2(whole);
    const cut = 2 * whole.indexOf('😀') + 2; // between the two halves of the emoji
    const udh = (sequence: number) => Buffer.from([0x05, 0x00, 0x03, 0x2a, 0x02, sequence]);
    const first = read({ data_coding: 8, esm_class: 0x40, short_message: Buffer.concat([udh(1), units.subarray(0, cut)]) });
    const second = read({ data_coding: 8, esm_class: 0x40, short_message: Buffer.concat([udh(2), units.subarray(cut)]) });
    expect(first.concatenation).to.deep.equal({ reference: 0x2a, total: 2, sequence: 1 });
    expect(second.concatenation).to.deep.equal({ reference: 0x2a, total: 2, sequence: 2 });
    expect(first.body + second.body).to.equal(whole);
  });

  it('reads the 8-bit (IE 00) and 16-bit (IE 08) concatenation references', () => {
    const eight = read({ data_coding: 0, esm_class: 0x40, short_message: Buffer.from([0x05, 0x00, 0x03, 0xfe, 0x03, 0x02, 0x48, 0x69]) });
    expect(eight).to.include({ body: 'Hi' });
    expect(eight.concatenation).to.deep.equal({ reference: 0xfe, total: 3, sequence: 2 });
    const sixteen = read({ data_coding: 0, esm_class: 0x40, short_message: Buffer.from([0x06, 0x08, 0x04, 0x12, 0x34, 0x04, 0x04, 0x48, 0x69]) });
    expect(sixteen).to.include({ body: 'Hi' });
    expect(sixteen.concatenation).to.deep.equal({ reference: 0x1234, total: 4, sequence: 4 });
  });

  it('finds the concatenation IE among other IEs of the UDH', () => {
    // A port-addressing IE (05) first, then IE 00.
    expect(udhConcatenation([Buffer.from([0x05, 0x04, 0x0b, 0x84, 0x23, 0xf0]), Buffer.from([0x00, 0x03, 0x07, 0x02, 0x01])])).to.deep.equal({
      reference: 7,
      total: 2,
      sequence: 1,
    });
    expect(udhConcatenation([Buffer.from([0x05, 0x04, 0x0b, 0x84, 0x23, 0xf0])])).to.equal(undefined);
  });

  it('reads the sar_msg_ref_num, sar_total_segments and sar_segment_seqnum TLVs', () => {
    const delivery = read({ data_coding: 8, short_message: ucs2('часть'), sar_msg_ref_num: 0x0102, sar_total_segments: 3, sar_segment_seqnum: 3 });
    expect(delivery).to.include({ body: 'часть', encoding: 'UCS-2' });
    expect(delivery.concatenation).to.deep.equal({ reference: 0x0102, total: 3, sequence: 3 });
  });

  it('treats a "concatenated" message of one part as a whole message', () => {
    const delivery = read({ data_coding: 0, esm_class: 0x40, short_message: Buffer.from([0x05, 0x00, 0x03, 0x01, 0x01, 0x01, 0x48, 0x69]) });
    expect(delivery).to.deep.equal({ from: '+447911123456', to: '+447911223344', body: 'Hi', encoding: 'GSM-7' });
  });

  it('keeps a short code and an alphanumeric address as sent, and adds + to a long number of unknown TON', () => {
    expect(
      read({ data_coding: 0, short_message: Buffer.from('Hi'), source_addr_ton: 0, source_addr: '447911123456', dest_addr_ton: 3, destination_addr: '60777' }),
    ).to.include({
      from: '+447911123456',
      to: '60777',
    });
    expect(read({ data_coding: 0, short_message: Buffer.from('Hi'), source_addr_ton: 5, source_addr: 'ACME' })).to.include({ from: 'ACME' });
  });

  it('refuses a data_coding it does not store, a part numbered outside its message, and a message without a sender', () => {
    expect(readInboundPdu(received({ data_coding: 4, short_message: Buffer.from([1, 2, 3]) }))).to.deep.include({ ok: false });
    expect(
      readInboundPdu(received({ data_coding: 0, esm_class: 0x40, short_message: Buffer.from([0x05, 0x00, 0x03, 0x01, 0x02, 0x03, 0x48]) })),
    ).to.deep.include({ ok: false });
    expect(readInboundPdu(received({ data_coding: 0, short_message: Buffer.from('Hi'), source_addr: '' }))).to.deep.include({ ok: false });
  });
});
