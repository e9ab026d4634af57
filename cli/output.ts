// What the CLI prints and how it exits. Human mode prints tables and key/value blocks; --json
// prints the API's `data` (pretty JSON) on stdout and nothing else there. Errors always go to
// stderr: one readable line, or one JSON object with --json, so that stdout stays parseable.
import Table from 'cli-table3';
import { DispatchError } from '../sdk/errors.ts';
import type { Pagination } from './admin-client.ts';

/** The exit codes, listed in `dispatch --help`. */
export const EXIT = {
  ok: 0,
  /** Dispatch refused the request (4xx); `send --dry-run`: it would refuse the send. */
  refused: 1,
  /** Bad flags or arguments, missing settings, unreadable input file. */
  usage: 2,
  /** Dispatch could not be reached, or failed (network error, 5xx, an answer that is not Dispatch's). */
  unavailable: 3,
  /** `bulk` or `opt-outs add` finished, but some recipients or numbers failed; `bulk --dry-run`: some would be refused. */
  partial: 4,
  /** `send --wait`: the message ended `failed` or `undelivered`. */
  notDelivered: 5,
  /** `send --wait`: --timeout ran out before the message reached a final state. */
  timedOut: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  Dispatch refused the request (4xx: invalid input, not found, no balance...), or would (send --dry-run)
  2  usage error: bad flags or arguments, missing settings, unreadable file
  3  Dispatch unreachable or failing (network error, 5xx)
  4  bulk finished but some recipients failed, or would (bulk --dry-run); opt-outs add: some numbers failed
  5  send --wait: the message ended failed or undelivered
  6  send --wait: no final state (delivered, undelivered, failed) within --timeout`;

/** A mistake in how the CLI was called, found after parsing (exit 2). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Something the CLI depends on could not be reached or failed (exit 3): the database of `migrate`, say. */
export class UnavailableError extends Error {
  override name = 'UnavailableError';
}

/** The exit code an error stands for. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT.usage;
  if (error instanceof UnavailableError) return EXIT.unavailable;
  if (error instanceof DispatchError)
    return error.status === 0 || error.status >= 500 || error.code === 'unexpected_response' ? EXIT.unavailable : EXIT.refused;
  return EXIT.refused;
}

/** The one-line description of an error: `<message> (<code>, param <param>, request <id>)`. */
export function describeError(error: unknown): string {
  if (error instanceof DispatchError) {
    const notes = [error.code, error.param !== undefined && `param ${error.param}`, error.requestId && `request ${error.requestId}`].filter(Boolean);
    return `${error.message} (${notes.join(', ')})`;
  }
  return error instanceof Error ? error.message : String(error);
}

function errorObject(error: unknown): Record<string, unknown> {
  if (error instanceof DispatchError) {
    return {
      error: {
        status: error.status,
        type: error.type,
        code: error.code,
        message: error.message,
        ...(error.param !== undefined && { param: error.param }),
        ...(error.details !== undefined && { details: error.details }),
        request_id: error.requestId,
      },
    };
  }
  if (error instanceof UsageError) return { error: { type: 'usage_error', code: 'usage_error', message: error.message } };
  if (error instanceof UnavailableError) return { error: { type: 'unavailable', code: 'unavailable', message: error.message } };
  return { error: { type: 'cli_error', code: 'cli_error', message: error instanceof Error ? error.message : String(error) } };
}

export interface Streams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export class Output {
  readonly json: boolean;
  readonly #streams: Streams;

  constructor(json: boolean, streams: Streams = process) {
    this.json = json;
    this.#streams = streams;
  }

  /** The result of a command: `value` as JSON with --json, else what `human` renders. */
  result(value: unknown, human: () => string): void {
    this.#streams.stdout.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : ensureNewline(human()));
  }

  /** One JSON object per line (NDJSON) with --json, else the human line: for streams of items. */
  item(value: unknown, human: () => string): void {
    this.#streams.stdout.write(this.json ? `${JSON.stringify(value)}\n` : ensureNewline(human()));
  }

  /** A note for a person (stderr, human mode only): progress, hints. */
  note(text: string): void {
    if (!this.json) this.#streams.stderr.write(ensureNewline(text));
  }

  /** A warning: stderr in both modes (JSON with --json). */
  warn(message: string): void {
    this.#streams.stderr.write(this.json ? `${JSON.stringify({ warning: message })}\n` : `warning: ${message}\n`);
  }

  /** Reports an error on stderr and answers the exit code it stands for. */
  fail(error: unknown): ExitCode {
    const code = exitCodeFor(error);
    if (this.json) this.#streams.stderr.write(`${JSON.stringify(errorObject(error))}\n`);
    else this.#streams.stderr.write(`error: ${describeError(error)}\n`);
    if (
      !(error instanceof DispatchError) &&
      !(error instanceof UsageError) &&
      !(error instanceof UnavailableError) &&
      process.env.DISPATCH_DEBUG &&
      error instanceof Error
    ) {
      this.#streams.stderr.write(`${error.stack}\n`);
    }
    return code;
  }
}

function ensureNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}

export type Cell = string | number | boolean | null | undefined;

/** How a value reads in a table or a key/value block. */
export function show(value: unknown): string {
  if (value === null || value === undefined) return '-';
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(show).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  // eslint-disable-next-line @typescript-eslint/no-base-to-string -- objects went out as JSON above; what is left (a number, a boolean) has its own text, but TypeScript types it `{}`
  return String(value);
}

/** A table with a header row (no colours, so that it reads the same in a pipe). */
export function table(head: string[], rows: Cell[][]): string {
  const rendered = new Table({ head, style: { head: [], border: [] } });
  for (const row of rows) rendered.push(row.map(show));
  return rendered.toString();
}

/** What a list holds, in the singular and the plural: `['message', 'messages']`. */
export type Noun = readonly [one: string, many: string];

/**
 * One page of a list: its table, then where it is in the list and how to go on. An empty page
 * says whether the list is empty or the page is past its end.
 */
export function pageTable<T>(page: { data: T[]; pagination: Pagination }, [one, many]: Noun, head: string[], row: (item: T) => Cell[]): string {
  const { page: number, pages, total, has_more: more } = page.pagination;
  if (page.data.length === 0) return total === 0 ? `No ${many}.` : `No ${many} on page ${number} (${total} in all).`;
  return `${table(head, page.data.map(row))}\nPage ${number} of ${pages} (${total} ${total === 1 ? one : many})${more ? `: --page ${number + 1} for more` : ''}`;
}

/** A key/value block: one `key  value` line per field, keys aligned. */
export function fields(pairs: [string, unknown][]): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${key.padEnd(width)}  ${show(value)}`).join('\n');
}

/** An amount with its currency, as the API rounds it (4 decimal places at most). */
export function money(amount: number, currency: string): string {
  return `${amount} ${currency}`;
}
