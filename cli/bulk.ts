// The work of `dispatch bulk`, apart from its flags and rendering: read the recipients of a CSV
// file, send (or preview) them in bulk requests of up to 1,000, and sum up what happened (or
// would happen) to each row.
import { parse } from 'csv-parse/sync';
import type { BulkResult, Message, MessagePreview, RecipientPreview } from '../sdk/index.ts';
import { DispatchError } from '../sdk/errors.ts';
import { UsageError } from './output.ts';

/** The most recipients one `POST /messages/bulk` takes. */
export const CHUNK_SIZE = 1000;
const E164 = /^\+[1-9][0-9]{1,14}$/;

export interface Recipient {
  /** The data row it came from: 1 is the first row after the header. */
  row: number;
  to: string;
}

/** What happened to one row. `id` is null when no message was stored (never sent, or the whole request was refused). */
export interface BulkItem {
  row: number;
  to: string;
  id: string | null;
  status: Message['status'] | 'not_sent';
  cost: number;
  error: { code: string; message: string } | null;
}

export interface BulkSummary {
  object: 'bulk_summary';
  total: number;
  /** Recipients stored as pending (charged). */
  accepted: number;
  /** Every other recipient: failed by Dispatch, refused locally, or not sent after a refusal. */
  failed: number;
  /** Failures counted by error code. */
  failures: Record<string, number>;
  /** The sum of the accepted messages' cost. */
  cost: number;
  currency: string | null;
  /** Bulk requests made (each of up to 1,000 recipients). */
  requests: number;
  /** The bulk id of each request that stored messages, in order: `dispatch bulk cancel` takes one. */
  bulk_ids: string[];
  items: BulkItem[];
}

/** What `bulk --dry-run` found: the previews of every request, one recipient per row, in file order. */
export interface BulkPreview {
  object: 'bulk_preview';
  total: number;
  /** Recipients the requests would accept. */
  sendable: number;
  /** Recipients they would refuse, or that are not E.164 and would not be sent. */
  refused: number;
  /** What the sendable recipients would be charged. */
  cost: number;
  /** Null when no request was made (no row was E.164). */
  currency: string | null;
  /** Preview requests made (each of up to 1,000 recipients). */
  requests: number;
  recipients: (RecipientPreview & { row: number })[];
}

/** The recipients of a CSV text with a header row, from `column`. */
export function readRecipients(text: string, column: string): Recipient[] {
  let rows: string[][];
  try {
    rows = parse(text, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true });
  } catch (error) {
    throw new UsageError(`cannot parse the CSV: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (rows.length === 0) throw new UsageError('the CSV is empty: expected a header row naming a column "' + column + '"');
  const header = rows[0];
  const index = header.findIndex((name) => name.toLowerCase() === column.toLowerCase());
  if (index === -1) throw new UsageError(`the CSV has no column "${column}" (header: ${header.join(', ')}); name it with --column`);
  return rows.slice(1).map((cells, i) => ({ row: i + 1, to: cells[index] ?? '' }));
}

export function chunk<T>(items: T[], size = CHUNK_SIZE): T[][] {
  const chunks: T[][] = [];
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size));
  return chunks;
}

/** Sends one bulk request: the recipients of chunk number `index` (from 0). */
export type SendChunk = (recipients: string[], index: number) => Promise<BulkResult>;

/** Previews one bulk request: the recipients of chunk number `index` (from 0). */
export type PreviewChunk = (recipients: string[], index: number) => Promise<MessagePreview>;

/**
 * Why a row is not sent at all, or null when it is an E.164 number. Such a row is refused here
 * rather than sent, since one such item makes Dispatch refuse its whole request.
 */
function localRefusal(recipient: Recipient): string | null {
  if (E164.test(recipient.to)) return null;
  return recipient.to === '' ? 'Empty recipient.' : `${recipient.to} is not an E.164 number such as +447400123456.`;
}

/** A sum of amounts in units of 0.0001, the API's precision: no binary rounding drift over thousands of rows. */
function sumAmounts(amounts: number[]): number {
  return amounts.reduce((sum, amount) => sum + Math.round(amount * 10_000), 0) / 10_000;
}

export interface BulkOutcome {
  summary: BulkSummary;
  /** The error that refused a whole request and stopped the run; its rows and later ones are `not_sent`. */
  stoppedBy: DispatchError | null;
}

/**
 * Sends every recipient, chunk by chunk in file order. A row that is not an E.164 number is
 * failed here (`parameter_invalid`). A request refused whole (bad sender, no balance at all, a
 * limit reached, Dispatch unreachable...) stops the run: later requests would meet the same refusal.
 */
export async function sendBulk(recipients: Recipient[], send: SendChunk, onChunk: (done: number, failed: number) => void = () => {}): Promise<BulkOutcome> {
  const items: BulkItem[] = [];
  const valid: Recipient[] = [];
  for (const recipient of recipients) {
    const refusal = localRefusal(recipient);
    if (refusal === null) valid.push(recipient);
    else items.push(notSent(recipient, 'parameter_invalid', refusal));
  }
  let stoppedBy: DispatchError | null = null;
  let requests = 0;
  const bulkIds: string[] = [];
  let done = items.length;
  const failedSoFar = () => items.filter((item) => item.error !== null).length;
  onChunk(done, failedSoFar());
  for (const [index, part] of chunk(valid).entries()) {
    if (stoppedBy) {
      items.push(...part.map((recipient) => notSent(recipient, stoppedBy!.code, 'Not sent: an earlier bulk request was refused.')));
      continue;
    }
    try {
      requests++;
      const result = await send(
        part.map((recipient) => recipient.to),
        index,
      );
      if (result.bulk_id !== undefined) bulkIds.push(result.bulk_id);
      result.messages.forEach((message, i) => items.push(fromMessage(part[i], message)));
    } catch (error) {
      if (!(error instanceof DispatchError)) throw error;
      stoppedBy = error;
      items.push(...part.map((recipient) => notSent(recipient, error.code, error.message)));
    }
    done += part.length;
    onChunk(done, failedSoFar());
  }
  items.sort((a, b) => a.row - b.row);
  return { summary: summarize(items, requests, bulkIds), stoppedBy };
}

/**
 * Previews every recipient, chunk by chunk in file order, as `sendBulk` would send them: a row
 * that is not an E.164 number is refused here (`parameter_invalid`), the others by Dispatch's
 * preview. Each request is previewed alone, so the balance is checked per request, not across them.
 */
export async function previewBulk(recipients: Recipient[], body: string, preview: PreviewChunk): Promise<BulkPreview> {
  const items: BulkPreview['recipients'] = [];
  const valid: Recipient[] = [];
  for (const recipient of recipients) {
    const refusal = localRefusal(recipient);
    if (refusal === null) valid.push(recipient);
    else items.push(refusedHere(recipient, body, refusal));
  }
  let currency: string | null = null;
  let requests = 0;
  for (const [index, part] of chunk(valid).entries()) {
    requests++;
    const answer = await preview(
      part.map((recipient) => recipient.to),
      index,
    );
    currency ??= answer.currency;
    answer.recipients.forEach((item, i) => items.push({ row: part[i].row, ...item }));
  }
  items.sort((a, b) => a.row - b.row);
  const sendable = items.filter((item) => item.refusal === null);
  return {
    object: 'bulk_preview',
    total: items.length,
    sendable: sendable.length,
    refused: items.length - sendable.length,
    cost: sumAmounts(sendable.map((item) => item.cost ?? 0)),
    currency,
    requests,
    recipients: items,
  };
}

/** A row the CLI would not send, as Dispatch answers a single send to it (400 `parameter_invalid`). */
function refusedHere(recipient: Recipient, body: string, message: string): RecipientPreview & { row: number } {
  return {
    row: recipient.row,
    to: recipient.to,
    body,
    smart_encoded: false,
    encoding: null,
    segments: null,
    ucs2_characters: [],
    route_id: null,
    price_per_segment: null,
    cost: null,
    send_at: null,
    refusal: { status: 400, error: { type: 'invalid_request_error', code: 'parameter_invalid', message } },
  };
}

function notSent(recipient: Recipient, code: string, message: string): BulkItem {
  return { row: recipient.row, to: recipient.to, id: null, status: 'not_sent', cost: 0, error: { code, message } };
}

function fromMessage(recipient: Recipient, message: Message): BulkItem & { currency: string } {
  return {
    row: recipient.row,
    to: message.to,
    id: message.id,
    status: message.status,
    cost: message.cost,
    error: message.error && { code: message.error.code, message: message.error.message },
    currency: message.currency,
  };
}

function summarize(items: (BulkItem & { currency?: string })[], requests: number, bulkIds: string[]): BulkSummary {
  const failures: Record<string, number> = {};
  const costs: number[] = [];
  let currency: string | null = null;
  for (const item of items) {
    currency ??= item.currency ?? null;
    if (item.error === null) costs.push(item.cost);
    else failures[item.error.code] = (failures[item.error.code] ?? 0) + 1;
  }
  return {
    object: 'bulk_summary',
    total: items.length,
    accepted: costs.length,
    failed: items.length - costs.length,
    failures,
    cost: sumAmounts(costs),
    currency,
    requests,
    bulk_ids: bulkIds,
    items: items.map(({ currency: _currency, ...item }) => item),
  };
}
