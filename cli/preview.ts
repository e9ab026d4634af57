// What `send --dry-run` and `bulk --dry-run` print: a row per recipient of a preview (with its
// CSV row for bulk), the characters that make the body UCS-2, the refusals by code, and totals.
import type { RecipientPreview } from '../sdk/index.ts';
import { type Cell, money, table } from './output.ts';

/** A recipient of a preview; `row` is its CSV row (bulk). */
export type PreviewRow = RecipientPreview & { row?: number };

export interface PreviewTotals {
  total: number;
  sendable: number;
  refused: number;
  cost: number;
  /** Null when no request was made (bulk: every row refused by the CLI). */
  currency: string | null;
  /** Bulk: the preview requests made. */
  requests?: number;
}

const amount = (cost: number, currency: string | null) => (currency === null ? cost : money(cost, currency));
const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
const codePoint = (character: string) => `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

function recipientTable(recipients: PreviewRow[], currency: string | null): string {
  const rows = recipients.some((recipient) => recipient.row !== undefined);
  return table(
    [...(rows ? ['Row'] : []), 'To', 'Encoding', 'Segments', 'Route', 'Cost', 'Send at', 'Refusal'],
    recipients.map((recipient): Cell[] => [
      ...(rows ? [recipient.row] : []),
      recipient.to,
      recipient.encoding,
      recipient.segments,
      recipient.route_id,
      recipient.cost === null ? null : amount(recipient.cost, currency),
      recipient.refusal ? null : (recipient.send_at ?? 'now'),
      recipient.refusal?.error.code,
    ]),
  );
}

/** The characters that make the body UCS-2 (70 characters a segment instead of 160); the body is the same for every recipient. */
function ucs2Line(recipients: PreviewRow[]): string | null {
  const characters = recipients.find((recipient) => recipient.ucs2_characters.length > 0)?.ucs2_characters;
  if (!characters) return null;
  const listed = characters.map(({ character, position }) => `${character} (${codePoint(character)}) at ${position}`).join(', ');
  return `UCS-2 characters (70 characters a segment instead of 160): ${listed}`;
}

function refusalTable(recipients: PreviewRow[]): string | null {
  const byCode = Map.groupBy(
    recipients.filter((recipient) => recipient.refusal !== null),
    (recipient) => recipient.refusal!.error.code,
  );
  if (byCode.size === 0) return null;
  const rows = [...byCode]
    .sort(([, a], [, b]) => b.length - a.length)
    .map(([code, refused]): Cell[] => {
      const first = refused[0];
      const where = first.row === undefined ? first.to : `row ${first.row} (${first.to || 'empty'})`;
      return [code, refused.length, `${where}: ${first.refusal!.error.message}`];
    });
  return `Refusals by error code:\n${table(['Code', 'Count', 'First refusal'], rows)}`;
}

function totalsLine(totals: PreviewTotals): string {
  const requests = totals.requests === undefined ? '' : ` in ${plural(totals.requests, 'request')}`;
  return `Dry run, nothing sent: ${plural(totals.total, 'recipient')}${requests}, ${totals.sendable} sendable, ${totals.refused} refused; cost ${amount(totals.cost, totals.currency)}.`;
}

export function showPreview(recipients: PreviewRow[], totals: PreviewTotals): string {
  return [recipientTable(recipients, totals.currency), ucs2Line(recipients), refusalTable(recipients), totalsLine(totals)]
    .filter((part) => part !== null)
    .join('\n');
}
