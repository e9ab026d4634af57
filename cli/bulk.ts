// The work of `dispatch bulk`, apart from its flags and rendering: read the recipients of a CSV
// file, send them in bulk requests of up to 1,000, and sum up what happened to each row.
import { parse } from 'csv-parse/sync';
import type { BulkResult, Message } from '../sdk/index.ts';
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
  items: BulkItem[];
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

export interface BulkOutcome {
  summary: BulkSummary;
  /** The error that refused a whole request and stopped the run; its rows and later ones are `not_sent`. */
  stoppedBy: DispatchError | null;
}

/**
 * Sends every recipient, chunk by chunk in file order. A row that is not an E.164 number is
 * failed here (`parameter_invalid`) rather than sent, since one such item makes Dispatch refuse its
 * whole request. A request refused whole (bad sender, no balance at all, a limit reached,
 * Dispatch unreachable...) stops the run: later requests would meet the same refusal.
 */
export async function sendBulk(recipients: Recipient[], send: SendChunk, onChunk: (done: number, failed: number) => void = () => {}): Promise<BulkOutcome> {
  const items: BulkItem[] = [];
  const valid: Recipient[] = [];
  for (const recipient of recipients) {
    if (E164.test(recipient.to)) valid.push(recipient);
    else
      items.push(
        notSent(recipient, 'parameter_invalid', recipient.to === '' ? 'Empty recipient.' : `${recipient.to} is not an E.164 number such as +447400123456.`),
      );
  }
  let stoppedBy: DispatchError | null = null;
  let requests = 0;
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
  return { summary: summarize(items, requests), stoppedBy };
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

function summarize(items: (BulkItem & { currency?: string })[], requests: number): BulkSummary {
  const failures: Record<string, number> = {};
  let accepted = 0;
  let cost = 0; // in units of 0.0001, the API's precision: no binary rounding drift over thousands of rows
  let currency: string | null = null;
  for (const item of items) {
    currency ??= item.currency ?? null;
    if (item.error === null) {
      accepted++;
      cost += Math.round(item.cost * 10_000);
    } else {
      failures[item.error.code] = (failures[item.error.code] ?? 0) + 1;
    }
  }
  return {
    object: 'bulk_summary',
    total: items.length,
    accepted,
    failed: items.length - accepted,
    failures,
    cost: cost / 10_000,
    currency,
    requests,
    items: items.map(({ currency: _currency, ...item }) => item),
  };
}
