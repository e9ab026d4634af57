/**
 * The parts of the `smpp` package (0.5.1, CommonJS, no types of its own) that Dispatch uses.
 * Import it as `import smpp from 'smpp'` (the default export is module.exports) and the types
 * with `import type`.
 */
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';
  import type { ConnectionOptions } from 'node:tls';

  /** A decoded short_message: the package splits off the UDH and decodes the text per data_coding. */
  export interface DecodedShortMessage {
    udh?: Buffer[];
    message: string | Buffer;
  }

  export interface Pdu {
    command: string;
    command_id: number;
    command_status: number;
    sequence_number: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
    message_id?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    source_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    destination_addr?: string;
    esm_class?: number;
    registered_delivery?: number;
    /** Absolute or relative (ends in "R") time; a string of 12 characters or fewer is taken as relative. */
    validity_period?: string;
    data_coding?: number;
    /** A Buffer is written as-is; once received it is decoded (see DecodedShortMessage). */
    short_message?: Buffer | DecodedShortMessage;
    message_payload?: Buffer | DecodedShortMessage;
    receipted_message_id?: string;
    message_state?: number;
    sar_msg_ref_num?: number;
    sar_total_segments?: number;
    sar_segment_seqnum?: number;
    isResponse(): boolean;
    /** The response PDU for this request; a non-zero command_status gives a header-only PDU. */
    response(options?: Record<string, unknown>): Pdu;
    toBuffer(): Buffer;
  }

  export interface Session extends EventEmitter {
    socket: Socket;
    /**
     * Writes a PDU, numbering requests; the callback gets the response with the same sequence
     * number. Answers false (and never calls back) when the socket is not writable.
     */
    send(pdu: Pdu, responseCallback?: (response: Pdu) => void, sendCallback?: (pdu: Pdu) => void): boolean;
    /** Ends the socket politely. */
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
  }

  export interface Server extends NetServer {
    sessions: Session[];
  }

  export interface ConnectOptions extends Partial<ConnectionOptions> {
    host: string;
    port: number;
    /** TLS through node:tls with these same options; the session then emits 'secureConnect'. */
    tls?: boolean;
  }

  const smpp: {
    connect(options: ConnectOptions): Session;
    createServer(listener?: (session: Session) => void): Server;
    PDU: new (command: string, fields?: Record<string, unknown>) => Pdu;
    /** Command status names to codes: ESME_ROK, ESME_RTHROTTLED, ... */
    errors: Readonly<Record<string, number>>;
  };
  export default smpp;
}
