/**
 * A fake SMSC: a real SMPP 3.4 server (the smpp package's) on 127.0.0.1 and a random port, for
 * the SMPP provider's tests and for end-to-end tests of the whole service.
 *
 * It checks bind credentials, answers enquire_link and unbind, records each submit_sm with the
 * exact bytes that came over the wire, answers with a message id (or the status you choose), and
 * sends delivery receipts and handsets' messages to the bound ESME on request, delivering them
 * again, as a real SMSC does, while the ESME answers with an error.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import smpp from 'smpp';
import type { Pdu, Server, Session } from 'smpp';

export interface SmscSubmit {
  systemId: string;
  sourceAddr: string;
  sourceAddrTon: number;
  sourceAddrNpi: number;
  destinationAddr: string;
  destAddrTon: number;
  destAddrNpi: number;
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /** The user data as sent, without the UDH. */
  shortMessage: Buffer;
  /** The UDH as sent (length byte included), when esm_class has UDHI (0x40). */
  udh?: Buffer;
  /** The text as the smpp package decodes it (GSM 03.38 for data_coding 0, UTF-16BE for 8). */
  text: string;
  /** The id the SMSC answered with; empty when it answered an error or nothing. */
  messageId: string;
  /** The command_status it answered with; null when it did not answer. */
  status: number | null;
  /** validity_period as the smpp package reads it: the instant it ends, absolute or relative; null when none was written. */
  validityPeriod: Date | null;
}

/** A submit_sm command_status, null to leave the submit unanswered, or 'drop' to close the connection instead of answering. */
export type SubmitAnswer = number | null | 'drop';
export type SubmitResponder = SubmitAnswer | ((submit: SmscSubmit) => SubmitAnswer);

/** A delivery receipt sent, and the deliver_sm_resp command_status of each time it was delivered, in order. */
export interface SmscReceipt {
  text: string;
  statuses: number[];
}

/** A handset's message sent, and the deliver_sm_resp command_status of each time it was delivered, in order. */
export interface SmscInbound {
  fields: Record<string, unknown>;
  statuses: number[];
}

export interface ReceiptOptions {
  /** Also send the receipted_message_id TLV (default false: the id is only in the text). */
  receiptedMessageIdTlv?: boolean;
  /** Also send the message_state TLV with this value. */
  messageState?: number;
  /** `done date` (yymmddhhmm); default now. */
  doneDate?: string;
}

interface SessionState {
  boundAs: string | null;
  systemId: string;
  /** Raw bytes of the PDU being read, gathered from the package's socket reads. */
  chunks: Buffer[];
  raw: Buffer | null;
}

export class FakeSmsc {
  static readonly SYSTEM_ID = 'dispatch';
  static readonly PASSWORD = 'secret';

  readonly port: number;
  readonly submits: SmscSubmit[] = [];
  /** Successful binds so far. */
  binds = 0;
  /** Binds refused (wrong system_id or password). */
  refusedBinds = 0;
  /** Unbinds received from ESMEs. */
  unbinds = 0;
  /** enquire_link requests received from ESMEs. */
  enquireLinks = 0;
  /** The last bind request, accepted or not. */
  lastBind?: { command: string; systemId: string; systemType: string; interfaceVersion: number };
  /** Set to false to leave enquire_link unanswered, as a hung SMSC would. */
  answerEnquireLinks = true;
  /** Every receipt sent, with the answers it got. */
  readonly receipts: SmscReceipt[] = [];
  /** Every handset's message sent, with the answers it got. */
  readonly inbound: SmscInbound[] = [];
  /**
   * When set, a receipt or handset's message answered with a non-zero status (or not deliverable, no ESME bound) is
   * delivered again after this many ms, until it is answered 0 or the SMSC stops.
   */
  redeliverAfterMs: number | null = null;

  private readonly server: Server;
  private readonly systemId: string;
  private readonly password: string;
  private readonly states = new Map<Session, SessionState>();
  private responder: SubmitResponder = 0;
  private nextId = 0x5a000000 + Math.floor(Math.random() * 0x10000) * 0x100;
  private readonly redeliveries = new Set<NodeJS.Timeout>();
  private stopped = false;

  private constructor(server: Server, port: number, systemId: string, password: string) {
    this.server = server;
    this.port = port;
    this.systemId = systemId;
    this.password = password;
  }

  static async start(options: { systemId?: string; password?: string } = {}): Promise<FakeSmsc> {
    // Sessions reach the handler only once the server listens, after `smsc` is made.
    const server = smpp.createServer((session) => smsc.accept(session));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const smsc = new FakeSmsc(server, (server.address() as AddressInfo).port, options.systemId ?? FakeSmsc.SYSTEM_ID, options.password ?? FakeSmsc.PASSWORD);
    return smsc;
  }

  /** Connections currently open. */
  get sessions(): number {
    return this.states.size;
  }

  /** Sessions currently bound. */
  get boundSessions(): number {
    return [...this.states.values()].filter((state) => state.boundAs !== null).length;
  }

  /** The command_status for the following submit_sm (default 0), or null to answer nothing. */
  respondWith(responder: SubmitResponder): void {
    this.responder = responder;
  }

  /** Sends a delivery receipt in the usual text format to the bound ESME; resolves with its deliver_sm_resp status. */
  sendReceipt(messageId: string, stat: string, err = '000', options: ReceiptOptions = {}): Promise<number> {
    const done = options.doneDate ?? receiptDate(new Date());
    const text = `id:${messageId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:${done} done date:${done} stat:${stat} err:${err} text:`;
    return this.sendReceiptText(text, {
      ...(options.receiptedMessageIdTlv && { receipted_message_id: messageId }),
      ...(options.messageState !== undefined && { message_state: options.messageState }),
    });
  }

  /**
   * Sends a deliver_sm receipt (esm_class 0x04) with this exact text and these extra fields;
   * resolves with the first deliver_sm_resp status (later deliveries show in `receipts`).
   */
  sendReceiptText(text: string, fields: Record<string, unknown> = {}): Promise<number> {
    const receipt: SmscReceipt = { text, statuses: [] };
    this.receipts.push(receipt);
    return this.deliver(receipt.statuses, {
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: '',
      esm_class: 0x04,
      data_coding: 0,
      short_message: Buffer.from(text, 'latin1'),
      ...fields,
    });
  }

  /**
   * Sends a handset's message (a deliver_sm that is not a receipt) with these fields to the bound
   * ESME: `short_message` as the exact bytes (with its UDH when esm_class has UDHI). Resolves with
   * the first deliver_sm_resp status; it is delivered again like a receipt (see `inbound`).
   */
  sendInbound(
    fields: { source_addr: string; destination_addr: string; data_coding: number; short_message: Buffer } & Record<string, unknown>,
  ): Promise<number> {
    const delivery: SmscInbound = { fields, statuses: [] };
    this.inbound.push(delivery);
    return this.deliver(delivery.statuses, { source_addr_ton: 1, source_addr_npi: 1, dest_addr_ton: 1, dest_addr_npi: 1, esm_class: 0, ...fields });
  }

  /** One deliver_sm, recording each answer, and delivered again while answered with an error. */
  private deliver(statuses: number[], fields: Record<string, unknown>): Promise<number> {
    const deliver = (): Promise<number> =>
      this.request('deliver_sm', fields).then(
        (status) => {
          statuses.push(status);
          if (status !== 0) this.redeliver(deliver);
          return status;
        },
        (error: unknown) => {
          this.redeliver(deliver);
          throw error;
        },
      );
    return deliver();
  }

  private redeliver(deliver: () => Promise<number>): void {
    if (this.redeliverAfterMs === null || this.stopped) return;
    const timer = setTimeout(() => {
      this.redeliveries.delete(timer);
      deliver().catch(() => {});
    }, this.redeliverAfterMs);
    this.redeliveries.add(timer);
  }

  /** Sends enquire_link to the bound ESME; resolves with its enquire_link_resp status. */
  enquireLink(): Promise<number> {
    return this.request('enquire_link', {});
  }

  /** Sends unbind to the bound ESME, as an SMSC going down for maintenance does; resolves with its unbind_resp status. */
  unbind(): Promise<number> {
    return this.request('unbind', {});
  }

  /** Sends a request to the most recently bound receiving ESME and resolves with the response's command_status. */
  private request(command: string, fields: Record<string, unknown>): Promise<number> {
    const session = [...this.states].reverse().find(([, state]) => state.boundAs === 'bind_transceiver' || state.boundAs === 'bind_receiver')?.[0];
    if (!session) return Promise.reject(new Error(`fake SMSC: no ESME bound to receive ${command}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake SMSC: no ${command}_resp within 5 s`)), 5_000);
      const sent = session.send(new smpp.PDU(command, fields), (response) => {
        clearTimeout(timer);
        resolve(response.command_status);
      });
      if (!sent) {
        clearTimeout(timer);
        reject(new Error('fake SMSC: the session is not writable'));
      }
    });
  }

  /** Destroys every session's socket, as a crashing SMSC or a broken network would. */
  dropConnections(): void {
    for (const session of this.states.keys()) session.destroy();
  }

  async waitFor(predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`fake SMSC: condition not met within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.redeliveries) clearTimeout(timer);
    this.redeliveries.clear();
    const closed = new Promise((resolve) => this.server.close(resolve));
    this.dropConnections();
    await closed;
  }

  private accept(session: Session): void {
    const state: SessionState = { boundAs: null, systemId: '', chunks: [], raw: null };
    this.states.set(session, state);
    session.socket.setNoDelay(true);
    captureRawPdus(session, state);
    session.on('error', () => session.destroy());
    session.on('close', () => this.states.delete(session));
    session.on('pdu', (pdu: Pdu) => {
      state.raw = Buffer.concat(state.chunks);
      state.chunks = [];
      if (!pdu.isResponse()) this.handle(session, state, pdu);
    });
  }

  private handle(session: Session, state: SessionState, pdu: Pdu): void {
    switch (pdu.command) {
      case 'bind_transceiver':
      case 'bind_transmitter':
      case 'bind_receiver': {
        this.lastBind = {
          command: pdu.command,
          systemId: pdu.system_id ?? '',
          systemType: pdu.system_type ?? '',
          interfaceVersion: pdu.interface_version ?? 0,
        };
        const status =
          state.boundAs !== null
            ? smpp.errors.ESME_RALYBND
            : pdu.system_id !== this.systemId
              ? smpp.errors.ESME_RINVSYSID
              : pdu.password !== this.password
                ? smpp.errors.ESME_RINVPASWD
                : 0;
        if (status === 0) {
          state.boundAs = pdu.command;
          state.systemId = pdu.system_id ?? '';
          this.binds++;
        } else {
          this.refusedBinds++;
        }
        session.send(pdu.response({ command_status: status, system_id: 'fakesmsc' }));
        return;
      }
      case 'enquire_link':
        this.enquireLinks++;
        if (this.answerEnquireLinks) session.send(pdu.response());
        return;
      case 'unbind':
        this.unbinds++;
        state.boundAs = null;
        session.send(pdu.response());
        return;
      case 'submit_sm':
        this.submit(session, state, pdu);
        return;
      case 'deliver_sm_resp':
        return;
      default:
        session.send(pdu.response({ command_status: smpp.errors.ESME_RINVCMDID }));
    }
  }

  private submit(session: Session, state: SessionState, pdu: Pdu): void {
    if (state.boundAs !== 'bind_transceiver' && state.boundAs !== 'bind_transmitter') {
      session.send(pdu.response({ command_status: smpp.errors.ESME_RINVBNDSTS }));
      return;
    }
    const esmClass = pdu.esm_class ?? 0;
    const userData = submitShortMessage(state.raw!);
    const udhLength = esmClass & 0x40 && userData.length > 0 ? userData[0] + 1 : 0;
    const decoded = pdu.short_message;
    const message = decoded === undefined || Buffer.isBuffer(decoded) ? decoded : decoded.message;
    const submit: SmscSubmit = {
      systemId: state.systemId,
      sourceAddr: pdu.source_addr ?? '',
      sourceAddrTon: pdu.source_addr_ton ?? 0,
      sourceAddrNpi: pdu.source_addr_npi ?? 0,
      destinationAddr: pdu.destination_addr ?? '',
      destAddrTon: pdu.dest_addr_ton ?? 0,
      destAddrNpi: pdu.dest_addr_npi ?? 0,
      dataCoding: pdu.data_coding ?? 0,
      esmClass,
      registeredDelivery: pdu.registered_delivery ?? 0,
      shortMessage: userData.subarray(udhLength),
      ...(udhLength > 0 && { udh: userData.subarray(0, udhLength) }),
      text: typeof message === 'string' ? message : (message?.toString('latin1') ?? ''),
      messageId: '',
      status: null,
      validityPeriod: (pdu.validity_period as unknown as Date | undefined) || null,
    };
    this.submits.push(submit);
    const status = typeof this.responder === 'function' ? this.responder(submit) : this.responder;
    if (status === null) return;
    if (status === 'drop') {
      session.destroy();
      return;
    }
    submit.status = status;
    if (status !== 0) {
      session.send(pdu.response({ command_status: status }));
      return;
    }
    submit.messageId = (this.nextId++).toString(16);
    session.send(pdu.response({ message_id: submit.messageId }));
  }
}

/**
 * The package decodes short_message as it reads (GSM 03.38 text for data_coding 0), which would
 * hide the bytes the ESME really sent. It reads each PDU with two socket.read() calls (length,
 * then the rest) and emits 'pdu' right after, so gathering what read() returns gives that PDU's
 * raw bytes.
 */
function captureRawPdus(session: Session, state: SessionState): void {
  const socket = session.socket;
  const read = socket.read.bind(socket);
  socket.read = (size?: number) => {
    const chunk: unknown = read(size);
    if (Buffer.isBuffer(chunk)) state.chunks.push(chunk);
    return chunk;
  };
}

/** The short_message octets of a raw submit_sm PDU (header, then the SMPP 3.4 mandatory fields). */
function submitShortMessage(raw: Buffer): Buffer {
  let offset = 16;
  const skipCString = (): void => {
    while (raw[offset] !== 0) offset++;
    offset++;
  };
  skipCString(); // service_type
  offset += 2; // source_addr_ton, source_addr_npi
  skipCString(); // source_addr
  offset += 2; // dest_addr_ton, dest_addr_npi
  skipCString(); // destination_addr
  offset += 3; // esm_class, protocol_id, priority_flag
  skipCString(); // schedule_delivery_time
  skipCString(); // validity_period
  offset += 4; // registered_delivery, replace_if_present_flag, data_coding, sm_default_msg_id
  const length = raw[offset];
  return raw.subarray(offset + 1, offset + 1 + length);
}

/** yymmddhhmm in UTC. */
function receiptDate(date: Date): string {
  return date.toISOString().replace(/\D/g, '').slice(2, 12);
}
