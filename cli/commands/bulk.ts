// dispatch bulk --csv FILE: one message body to every recipient of a CSV file, in bulk requests
// of up to 1,000, with a progress bar on a terminal and a summary at the end.
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { Command } from 'commander';
import { readRecipients, sendBulk, CHUNK_SIZE, type BulkSummary } from '../bulk.ts';
import { customerOptions, positiveInteger, run } from '../context.ts';
import { EXIT, money, table, UsageError } from '../output.ts';

interface BulkOptions {
  csv: string;
  from: string;
  body: string;
  column: string;
  reference?: string;
  routeId?: number;
  /** Undefined unless --smart-encoding or --no-smart-encoding is given: the account's setting decides. */
  smartEncoding?: boolean;
  idempotencyKey?: string;
}

export function showSummary(summary: BulkSummary): string {
  const lines = [
    table(
      ['Total', 'Accepted', 'Failed', 'Cost'],
      [[summary.total, summary.accepted, summary.failed, summary.currency ? money(summary.cost, summary.currency) : summary.cost]],
    ),
  ];
  const codes = Object.entries(summary.failures).sort(([, a], [, b]) => b - a);
  if (codes.length > 0) {
    const first = (code: string) => summary.items.find((item) => item.error?.code === code);
    lines.push(
      'Failures by error code:',
      table(
        ['Code', 'Count', 'First failure'],
        codes.map(([code, count]) => {
          const item = first(code);
          return [code, count, item && `row ${item.row} (${item.to || 'empty'}): ${item.error?.message}`];
        }),
      ),
    );
  }
  return lines.join('\n');
}

function readInput(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function bulkCommand(): Command {
  return customerOptions(
    new Command('bulk')
      .description('Send one body to every recipient of a CSV file (a header row, one recipient per row)')
      .requiredOption('--csv <file>', "CSV file with a header row ('-' for stdin)")
      .requiredOption('--from <sender>', 'an approved sender ID of the account')
      .requiredOption('--body <text>', 'message text, up to 1,600 characters')
      .option('--column <name>', 'the column holding the E.164 numbers', 'to')
      .option('--reference <text>', 'your reference, set on every message')
      .option('--route-id <id>', 'send through this route only', positiveInteger)
      .option('--smart-encoding', 'replace characters GSM-7 lacks by look-alikes (curly quotes, dashes...) to send as GSM-7')
      .option('--no-smart-encoding', "send the body as given, whatever the account's setting")
      .option('--idempotency-key <prefix>', 'request n uses <prefix>-n, so that rerunning the same file never sends twice')
      .addHelpText(
        'after',
        `
Recipients go in requests of up to ${CHUNK_SIZE}, in file order. Rows that are not E.164 numbers
are not sent. A request refused whole (sender not approved, no balance, a limit reached) stops
the run; its rows and the later ones count as failed. The summary lists every failure by code;
--json prints it as an object: total, accepted, failed, failures {code: count}, cost, currency,
requests, and items [{row, to, id, status, cost, error}] (row 1 = the first row after the header).

Exits 0 when every recipient was accepted, 4 when some failed, 1 or 3 when a request was refused
(1) or Dispatch could not be reached (3).`,
      ),
  ).action((options: BulkOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const recipients = readRecipients(readInput(options.csv), options.column);
      if (recipients.length === 0) throw new UsageError(`${options.csv} has no recipient rows`);
      const dispatch = await sdk();
      const requests = Math.ceil(recipients.length / CHUNK_SIZE);
      const bar =
        !out.json && process.stderr.isTTY && requests > 1
          ? new cliProgress.SingleBar(
              {
                stream: process.stderr,
                format: 'Sending [{bar}] {percentage}% | {value}/{total} recipients | {failed} failed | ETA {eta_formatted}',
                hideCursor: true,
              },
              cliProgress.Presets.shades_classic,
            )
          : undefined;
      bar?.start(recipients.length, 0, { failed: 0 });
      let outcome;
      try {
        outcome = await sendBulk(
          recipients,
          (to, index) =>
            dispatch.messages.bulk(
              {
                recipients: to,
                from: options.from,
                body: options.body,
                ...(options.reference !== undefined && { reference: options.reference }),
                ...(options.routeId !== undefined && { route_id: options.routeId }),
                ...(options.smartEncoding !== undefined && { smart_encoding: options.smartEncoding }),
              },
              { idempotencyKey: options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}-${index + 1}` },
            ),
          (done, failed) => bar?.update(done, { failed }),
        );
      } finally {
        bar?.stop();
      }
      const { summary, stoppedBy } = outcome;
      out.result(summary, () => showSummary(summary));
      if (stoppedBy) return out.fail(stoppedBy);
      return summary.failed > 0 ? EXIT.partial : EXIT.ok;
    }),
  );
}
