/**
 * SMPP 3.4 upstream: Dispatch is the ESME, bound as transceiver to an SMSC.
 *
 * The provider binds as soon as it is created (not on first use): delivery receipts only arrive
 * on a bound session, so it stays bound for as long as it lives; keep one per route and close()
 * it. It keeps the bind alive with enquire_link and rebinds after any drop or refusal with
 * exponential backoff.
 *
 * A submit_sm that was written but never answered (no submit_sm_resp in time, or the link dropped
 * first) is an unknown outcome: the SMSC may have taken it. Only a submit that never left (no
 * bind, no writable session) is retryable elsewhere.
 */
import smpp from 'smpp';
import type { Pdu, Session } from 'smpp';
import { encodeGsm7, gsm7TextToBytes } from './gsm7-bytes.ts';
import { readInboundPdu } from './smpp-inbound.ts';
import { receiptToReport } from './smpp-receipt.ts';
import type { ConfigProblem, OutboundMessage, Provider, ProviderContext, ProviderLogger, SubmitOutcome } from './types.ts';

export interface SmppConfig {
  host: string;
  port: number;
  system_id: string;
  password: string;
  system_type?: string;
  tls?: boolean;
}

export interface SmppOptions {
  /** Interval of our enquire_link (default 30 s). */
  enquireLinkMs?: number;
  /** How long a response (bind, submit_sm, enquire_link), a connect or a submit's wait for the bind may take (default 10 s). */
  responseTimeoutMs?: number;
  /** First rebind delay after a drop (default 250 ms), doubled after each failed attempt... */
  rebindMinMs?: number;
  /** ...up to this (default 10 s). */
  rebindMaxMs?: number;
}

const FIELDS = ['host', 'port', 'system_id', 'password', 'system_type', 'tls'];

export function checkSmppConfig(config: unknown): ConfigProblem | null {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return { param: 'config', message: 'config must be an object.' };
  const fields = config as Record<string, unknown>;
  const unknown = Object.keys(fields).find((field) => !FIELDS.includes(field));
  if (unknown) return { param: `config.${unknown}`, message: `Received unknown parameter: config.${unknown}.` };
  const { host, port, system_id, password, system_type, tls } = fields;
  if (typeof host !== 'string' || !/^[A-Za-z0-9.:-]{1,253}$/.test(host))
    return { param: 'config.host', message: 'config.host must be a host name or IP address.' };
  if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535)
    return { param: 'config.port', message: 'config.port must be an integer from 1 to 65535.' };
  // SMPP 3.4 caps system_id at 15 characters, password at 8 and system_type at 12, but some
  // SMSCs hand out longer ones: allow them and let the SMSC judge at bind time.
  const problem =
    cstringProblem(system_id, 'system_id', 1, 64) ??
    cstringProblem(password, 'password', 0, 64) ??
    (system_type === undefined ? null : cstringProblem(system_type, 'system_type', 0, 64));
  if (problem) return problem;
  if (tls !== undefined && typeof tls !== 'boolean') return { param: 'config.tls', message: 'config.tls must be a boolean.' };
  return null;
}

function cstringProblem(value: unknown, name: string, min: number, max: number): ConfigProblem | null {
  if (typeof value === 'string' && value.length >= min && value.length <= max && /^[\x20-\x7e]*$/.test(value)) return null;
  return { param: `config.${name}`, message: `config.${name} must be a string of ${min} to ${max} printable ASCII characters.` };
}

export function createSmppProvider(config: SmppConfig, context: ProviderContext, options: SmppOptions = {}): Provider {
  const link = new SmppLink(config, context, options);
  return {
    submit: (message) => link.submit(message),
    close: () => link.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// Pure helpers

const ESM_CLASS_UDHI = 0x40;
const ESME_RINVCMDID = 0x03;
const ESME_RX_T_APPN = 0x64;
const ESME_RX_P_APPN = 0x65;
/** Requests handled by their own listener. */
const HANDLED_REQUESTS = new Set(['enquire_link', 'unbind', 'deliver_sm']);
/** Requests that take no response, and that a transceiver bind has no use for. */
const UNANSWERED_REQUESTS = new Set(['alert_notification', 'outbind']);
const ESM_CLASS_SMSC_DELIVERY_RECEIPT = 0x04;
const DATA_CODING_SMSC_DEFAULT = 0x00;
const DATA_CODING_UCS2 = 0x08;
const MAX_SHORT_MESSAGE_BYTES = 254;

const STATUS_NAMES: ReadonlyMap<number, string> = new Map(Object.entries(smpp.errors).map(([name, code]) => [code, name]));

/** `ESME_RTHROTTLED (0x58)`; an unknown status shows its code only. */
export function describeStatus(status: number): string {
  const hex = `0x${status.toString(16).toUpperCase().padStart(2, '0')}`;
  const name = STATUS_NAMES.get(status);
  return name ? `${name} (${hex})` : `status ${hex}`;
}

/**
 * Statuses that say "not now" rather than "never": the SMSC is throttling, full or failing, or
 * (ESME_RINVBNDSTS) it thinks we are unbound, a problem of the session, not of the message.
 */
const RETRYABLE_STATUSES = new Set([
  0x58, // ESME_RTHROTTLED
  0x08, // ESME_RSYSERR
  0x14, // ESME_RMSGQFUL
  0x04, // ESME_RINVBNDSTS
]);

/** A non-zero submit_sm_resp command_status as an outcome. */
export function submitStatusOutcome(status: number): SubmitOutcome & { status: 'rejected' | 'retryable' } {
  const message = `SMPP ${describeStatus(status)}`;
  return RETRYABLE_STATUSES.has(status)
    ? { status: 'retryable', code: 'provider_unavailable', message }
    : { status: 'rejected', code: 'provider_rejected', message };
}

/** The 6-byte concatenation UDH: IEI 00 (8-bit reference), `05 00 03 <ref> <total> <seq>`. */
export function concatUdh(reference: number, total: number, sequence: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, total, sequence]);
}

/** TON/NPI of an address: alphanumeric 5/0, short code (3 to 8 digits) 3/0, else international 1/1 without '+'. */
/**
 * SMPP's relative time format (SMPP 3.4, 7.1.1), as the smpp package takes it: YYMMDDhhmmss
 * (here days, hours, minutes and seconds only), to which the package appends the tenths and "R".
 */
export function relativeValidity(seconds: number): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const days = Math.floor(seconds / 86_400);
  return `0000${two(days)}${two(Math.floor((seconds % 86_400) / 3600))}${two(Math.floor((seconds % 3600) / 60))}${two(seconds % 60)}`;
}

export function sourceAddress(from: string): { ton: number; npi: number; addr: string } {
  if (/^\d{3,8}$/.test(from)) return { ton: 3, npi: 0, addr: from };
  if (/^\+?\d+$/.test(from)) return { ton: 1, npi: 1, addr: from.replace(/^\+/, '') };
  return { ton: 5, npi: 0, addr: from };
}

/** The short_message bytes of each part: unpacked GSM 03.38 or UTF-16BE, with a UDH when there are several. */
export function encodeParts(
  encoding: OutboundMessage['encoding'],
  parts: string[],
  reference: number,
): { dataCoding: number; esmClass: number; shortMessages: Buffer[] } {
  const bodies = parts.map((part) => (encoding === 'UCS-2' ? utf16be(part) : encodeGsm7(part)));
  if (bodies.length === 1) return { dataCoding: dataCodingOf(encoding), esmClass: 0, shortMessages: bodies };
  return {
    dataCoding: dataCodingOf(encoding),
    esmClass: ESM_CLASS_UDHI,
    shortMessages: bodies.map((body, i) => Buffer.concat([concatUdh(reference, bodies.length, i + 1), body])),
  };
}

function dataCodingOf(encoding: OutboundMessage['encoding']): number {
  return encoding === 'UCS-2' ? DATA_CODING_UCS2 : DATA_CODING_SMSC_DEFAULT;
}

function utf16be(text: string): Buffer {
  return Buffer.from(text, 'utf16le').swap16();
}

/**
 * The receipt text of a deliver_sm as ASCII. The package has already decoded it per data_coding,
 * and for 0 and 1 with the GSM 03.38 table, while SMSCs write receipts in ASCII: map it back.
 */
export function receiptText(pdu: Pick<Pdu, 'short_message' | 'message_payload' | 'data_coding'>): string {
  const decoded = [pdu.short_message, pdu.message_payload]
    .map((value) => (value === undefined || Buffer.isBuffer(value) ? value : value.message))
    .find((value) => value !== undefined && value.length > 0);
  if (decoded === undefined) return '';
  if (Buffer.isBuffer(decoded)) return decoded.toString('latin1');
  const alphabet = (pdu.data_coding ?? 0) & 0x0f;
  return alphabet === 0 || alphabet === 1 ? gsm7TextToBytes(decoded).toString('latin1') : decoded;
}

// ---------------------------------------------------------------------------------------------
// The session holder

/**
 * A response; no response in time; the link dropped after the request was written; the link was
 * not writable, so nothing was written; the PDU could not be encoded (nothing written either).
 */
type Response = Pdu | 'timeout' | 'closed' | 'unsent' | Error;

const SILENT: ProviderLogger = { info() {}, warn() {}, error() {} };

class SmppLink {
  private readonly config: SmppConfig;
  private readonly context: ProviderContext;
  private readonly enquireLinkMs: number;
  private readonly responseTimeoutMs: number;
  private readonly rebindMinMs: number;
  private readonly rebindMaxMs: number;
  private readonly logger: ProviderLogger;

  private session: Session | null = null;
  private bound = false;
  private closed = false;
  private rebindDelay: number;
  /** When the next connect attempt starts, while waiting out the backoff; 0 otherwise. */
  private nextAttemptAt = 0;
  private lastError = 'not bound yet';
  /** Whether a bind ever succeeded, to tell a rebind from the first bind in the logs. */
  private everBound = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private connectTimer: NodeJS.Timeout | null = null;
  private enquireTimer: NodeJS.Timeout | null = null;
  private enquiring = false;
  private udhReference = Math.floor(Math.random() * 256);
  /** Settles every request awaiting a response, so a drop fails them at once. */
  private readonly pending = new Set<(response: Response) => void>();
  private readonly bindWaiters = new Set<() => void>();

  constructor(config: SmppConfig, context: ProviderContext, options: SmppOptions) {
    this.config = config;
    this.context = context;
    this.enquireLinkMs = options.enquireLinkMs ?? 30_000;
    this.responseTimeoutMs = options.responseTimeoutMs ?? 10_000;
    this.rebindMinMs = options.rebindMinMs ?? 250;
    this.rebindMaxMs = options.rebindMaxMs ?? 10_000;
    this.logger = context.logger ?? SILENT;
    this.rebindDelay = this.rebindMinMs;
    this.connect();
  }

  async submit(message: OutboundMessage): Promise<SubmitOutcome> {
    if (this.closed) return unavailable('SMPP provider is closed');
    const reference = this.udhReference;
    this.udhReference = (this.udhReference + 1) & 0xff;
    let encoded: ReturnType<typeof encodeParts>;
    try {
      encoded = encodeParts(message.encoding, message.parts.length > 0 ? message.parts : [message.body], reference);
    } catch (error) {
      return { status: 'rejected', code: 'provider_rejected', message: `SMPP cannot encode the message: ${(error as Error).message}` };
    }
    if (encoded.shortMessages.some((bytes) => bytes.length > MAX_SHORT_MESSAGE_BYTES)) {
      return { status: 'rejected', code: 'provider_rejected', message: `SMPP short_message over ${MAX_SHORT_MESSAGE_BYTES} bytes` };
    }
    const source = sourceAddress(message.from);
    const total = encoded.shortMessages.length;
    const partIds: string[] = [];
    // Parts go one after the other, and the first failure stops the rest.
    for (const shortMessage of encoded.shortMessages) {
      const sent = await this.submitPart(message, source, encoded, shortMessage);
      if (typeof sent === 'string') {
        partIds.push(sent);
        continue;
      }
      if (total === 1) return sent;
      const part = `part ${partIds.length + 1} of ${total}: ${sent.message}`;
      // Earlier parts are with the SMSC already: another route would send them a second time.
      if (sent.status === 'retryable' && partIds.length > 0) {
        return { status: 'rejected', code: 'provider_rejected', message: `${part}; the parts before it were sent, so it is not sent again elsewhere` };
      }
      return { ...sent, message: part };
    }
    // Receipts come per part, each naming its own id.
    return total === 1 ? { status: 'accepted', providerMessageId: partIds[0] } : { status: 'accepted', providerMessageId: partIds[0], partIds };
  }

  /** One submit_sm: the SMSC's message id, or why there is none. */
  private async submitPart(
    message: OutboundMessage,
    source: ReturnType<typeof sourceAddress>,
    encoded: ReturnType<typeof encodeParts>,
    shortMessage: Buffer,
  ): Promise<string | Exclude<SubmitOutcome, { status: 'accepted' }>> {
    const session = await this.waitForBind();
    if (!session) return unavailable(`SMPP not bound to ${this.config.host}:${this.config.port}: ${this.lastError}`);
    const response = await this.request(session, 'submit_sm', {
      source_addr_ton: source.ton,
      source_addr_npi: source.npi,
      source_addr: source.addr,
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      destination_addr: message.to.replace(/^\+/, ''),
      esm_class: encoded.esmClass,
      registered_delivery: 1,
      ...(message.validitySeconds !== undefined && { validity_period: relativeValidity(message.validitySeconds) }),
      data_coding: encoded.dataCoding,
      // A Buffer goes out as-is; a string would be re-encoded by the package.
      short_message: shortMessage,
    });
    if (response instanceof Error) return { status: 'rejected', code: 'provider_rejected', message: `SMPP cannot encode submit_sm: ${response.message}` };
    if (response === 'unsent') return unavailable(`SMPP connection to ${this.config.host}:${this.config.port} lost before submit_sm was written`);
    // Written but unanswered: the SMSC may have taken it, and a submit elsewhere may be a second SMS.
    if (response === 'timeout') return unknownOutcome(`SMPP no submit_sm_resp within ${this.responseTimeoutMs} ms`);
    if (response === 'closed') return unknownOutcome('SMPP connection lost after submit_sm was written, before its response');
    if (response.command_status !== 0) return submitStatusOutcome(response.command_status);
    return response.message_id ?? '';
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.clearTimer('reconnectTimer');
    this.clearTimer('connectTimer');
    this.clearTimer('enquireTimer');
    for (const wake of this.bindWaiters) wake();
    const session = this.session;
    if (!session) return;
    if (this.bound) {
      await this.request(session, 'unbind', {}, Math.min(this.responseTimeoutMs, 2_000));
      this.logger.info(this.where(), 'SMPP unbound');
    }
    await new Promise<void>((resolve) => {
      if (session.socket.destroyed) return resolve();
      session.socket.once('close', () => resolve());
      session.destroy();
    });
  }

  /** The bound session, waiting up to the response timeout when a bind may come in time. */
  private waitForBind(): Promise<Session | null> {
    // A socket that is no longer writable is on its way to 'close' and a rebind: wait for that.
    if (this.bound && this.session?.socket.writable) return Promise.resolve(this.session);
    if (this.closed) return Promise.resolve(null);
    const deadline = Date.now() + this.responseTimeoutMs;
    // Waiting out a backoff that ends after the deadline would only delay the same answer.
    if (this.nextAttemptAt > deadline) return Promise.resolve(null);
    return new Promise((resolve) => {
      const wake = (): void => {
        this.bindWaiters.delete(wake);
        clearTimeout(timer);
        resolve(this.bound && !this.closed && this.session?.socket.writable ? this.session : null);
      };
      const timer = setTimeout(wake, deadline - Date.now());
      this.bindWaiters.add(wake);
    });
  }

  /** Sends a request and resolves with its response or why there is none; never rejects. */
  private request(session: Session, command: string, fields: Record<string, unknown>, timeoutMs = this.responseTimeoutMs): Promise<Response> {
    return new Promise((resolve) => {
      const settle = (response: Response): void => {
        if (!this.pending.delete(settle)) return;
        clearTimeout(timer);
        resolve(response);
      };
      this.pending.add(settle);
      const timer = setTimeout(() => settle('timeout'), timeoutMs);
      try {
        // The package serialises inside send() and throws there on a field it cannot write.
        if (!session.send(new smpp.PDU(command, fields), settle)) settle('unsent');
      } catch (error) {
        settle(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  private connect(): void {
    this.nextAttemptAt = 0;
    const { host, port } = this.config;
    const tls = this.config.tls === true;
    const session = smpp.connect({ host, port, tls });
    this.session = session;
    session.socket.setNoDelay(true);
    // No answer from a silent host: give up like a response timeout and try again later.
    this.connectTimer = setTimeout(() => {
      this.lastError = `connect to ${host}:${port} timed out`;
      session.destroy();
    }, this.responseTimeoutMs);

    session.on(tls ? 'secureConnect' : 'connect', () => {
      this.clearTimer('connectTimer');
      void this.bind(session);
    });
    // The socket reports errors before 'close'; without a listener the package would throw.
    // A PDU the package cannot parse also lands here and wedges its reader: start afresh.
    session.on('error', (error: Error) => {
      this.lastError = error.message;
      session.destroy();
    });
    session.on('close', () => this.onClose(session));
    session.on('enquire_link', (pdu: Pdu) => session.send(pdu.response()));
    // The SMSC is leaving: answer, then drop the socket ourselves (it might never close its side).
    session.on('unbind', (pdu: Pdu) => {
      this.lastError = 'the SMSC unbound';
      this.bound = false;
      this.logger.info(this.where(), 'SMPP unbound by the SMSC, rebinding');
      if (!session.send(pdu.response(), () => session.destroy())) session.destroy();
    });
    session.on('deliver_sm', (pdu: Pdu) => void this.onDeliver(session, pdu));
    // Any other request (data_sm, query_sm, an unknown command id) is refused with
    // ESME_RINVCMDID rather than left to time out; alert_notification takes no response.
    // (These listeners run inside the socket's 'readable' handler: a throw would crash the process.)
    session.on('pdu', (pdu: Pdu) => {
      if (pdu.isResponse() || HANDLED_REQUESTS.has(pdu.command)) return;
      if (UNANSWERED_REQUESTS.has(pdu.command)) {
        this.logger.warn({ ...this.where(), command: pdu.command }, 'SMPP request ignored: Dispatch has no use for it');
        return;
      }
      this.logger.warn({ ...this.where(), command: pdu.command, command_id: pdu.command_id }, 'SMPP request not handled, refused (ESME_RINVCMDID)');
      try {
        session.send(pdu.response({ command_status: ESME_RINVCMDID }));
      } catch {
        session.destroy();
      }
    });
  }

  private async bind(session: Session): Promise<void> {
    const response = await this.request(session, 'bind_transceiver', {
      system_id: this.config.system_id,
      password: this.config.password,
      system_type: this.config.system_type ?? '',
      interface_version: 0x34, // the package defaults to 0x50 (SMPP 5.0)
    });
    if (session !== this.session || this.closed) return;
    if (response === 'closed' || response === 'unsent') return;
    if (response === 'timeout' || response instanceof Error || response.command_status !== 0) {
      this.lastError =
        response === 'timeout'
          ? 'no bind_transceiver_resp in time'
          : response instanceof Error
            ? `cannot encode bind_transceiver: ${response.message}`
            : `bind refused: ${describeStatus(response.command_status)}`;
      session.destroy();
      return;
    }
    this.bound = true;
    this.rebindDelay = this.rebindMinMs;
    this.logger.info({ ...this.where(), system_id: this.config.system_id }, this.everBound ? 'SMPP rebound as transceiver' : 'SMPP bound as transceiver');
    this.everBound = true;
    this.enquireTimer = setInterval(() => void this.enquireLink(session), this.enquireLinkMs);
    for (const wake of this.bindWaiters) wake();
  }

  private async enquireLink(session: Session): Promise<void> {
    if (this.enquiring) return;
    this.enquiring = true;
    const response = await this.request(session, 'enquire_link', {});
    this.enquiring = false;
    if (response === 'timeout' && session === this.session) {
      this.lastError = 'no enquire_link_resp in time';
      session.destroy();
    }
  }

  private onClose(session: Session): void {
    if (session !== this.session) return;
    const wasBound = this.bound;
    this.session = null;
    this.bound = false;
    this.enquiring = false;
    this.clearTimer('connectTimer');
    this.clearTimer('enquireTimer');
    for (const settle of [...this.pending]) settle('closed');
    if (this.closed) return;
    const delay = this.rebindDelay;
    if (wasBound) this.logger.warn({ ...this.where(), error: this.lastError, retryInMs: delay }, 'SMPP link dropped, rebinding');
    // Said once per run of failures, not at every attempt of the backoff.
    else if (delay === this.rebindMinMs)
      this.logger.warn({ ...this.where(), error: this.lastError, retryInMs: delay }, 'SMPP cannot bind, retrying with backoff');
    this.rebindDelay = Math.min(this.rebindDelay * 2, this.rebindMaxMs);
    this.nextAttemptAt = Date.now() + delay;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  /**
   * Answers every deliver_sm, after what it carries has been handled: if the process dies first
   * the SMSC delivers it again, and if storing fails, ESME_RX_T_APPN (temporary) asks for a
   * retry. A receipt becomes a delivery report, anything else an inbound message; one that
   * cannot be read as either is refused for good (ESME_RX_P_APPN), since delivering it again
   * would not change it.
   */
  private async onDeliver(session: Session, pdu: Pdu): Promise<void> {
    const receipt = ((pdu.esm_class ?? 0) & ESM_CLASS_SMSC_DELIVERY_RECEIPT) !== 0;
    let status = 0;
    try {
      status = receipt ? await this.onReceipt(pdu) : await this.onInboundMessage(pdu);
    } catch (error) {
      status = ESME_RX_T_APPN;
      const what = receipt ? 'SMPP delivery report' : 'SMPP inbound message';
      this.logger.warn({ ...this.where(), error: (error as Error).message }, `${what} not recorded; asking the SMSC to deliver it again`);
    }
    try {
      session.send(pdu.response({ command_status: status }));
    } catch {
      session.destroy();
    }
  }

  private async onReceipt(pdu: Pdu): Promise<number> {
    const text = receiptText(pdu);
    const report = receiptToReport({ text, receiptedMessageId: pdu.receipted_message_id, messageState: pdu.message_state });
    if (report) await this.context.onReport(report);
    else this.logger.warn({ ...this.where(), text }, 'SMPP receipt without a final state or an id, acknowledged and dropped');
    return 0;
  }

  private async onInboundMessage(pdu: Pdu): Promise<number> {
    const reading = readInboundPdu(pdu);
    if (!reading.ok) {
      this.logger.warn(
        { ...this.where(), source_addr: pdu.source_addr, destination_addr: pdu.destination_addr, data_coding: pdu.data_coding, reason: reading.reason },
        'SMPP inbound message dropped: it cannot be read; refused for good (ESME_RX_P_APPN)',
      );
      return ESME_RX_P_APPN;
    }
    await this.context.onInbound(reading.delivery);
    return 0;
  }

  private where(): { routeId: number; host: string; port: number } {
    return { routeId: this.context.routeId, host: this.config.host, port: this.config.port };
  }

  private clearTimer(name: 'reconnectTimer' | 'connectTimer' | 'enquireTimer'): void {
    const timer = this[name];
    if (timer) {
      clearTimeout(timer);
      this[name] = null;
    }
  }
}

function unavailable(message: string): SubmitOutcome & { status: 'retryable' } {
  return { status: 'retryable', code: 'provider_unavailable', message };
}

function unknownOutcome(what: string): SubmitOutcome & { status: 'unknown' } {
  return { status: 'unknown', code: 'provider_timeout', message: `${what}; the SMSC may have sent it` };
}
