// dispatch bulk --csv FILE: one message body to every recipient of a CSV file, in bulk requests
// of up to 1,000, with a progress bar on a terminal and a summary at the end (or, with --dry-run,
// what would happen to each row). dispatch bulk cancel BULK_ID cancels what has not gone yet.
import { readFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { Command, Option } from 'commander';
import type { BulkCancel } from '../../sdk/index.ts';
import { previewBulk, readRecipients, sendBulk, CHUNK_SIZE, type BulkSummary } from '../bulk.ts';
import { customerOptions, messageFields, positiveInteger, run, scheduleFlags, type MessageOptions } from '../context.ts';
import { EXIT, fields, money, table, UsageError } from '../output.ts';
import { showPreview } from '../preview.ts';

interface BulkOptions extends MessageOptions {
  csv: string;
  column: string;
  idempotencyKey?: string;
  dryRun?: boolean;
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
  if (summary.bulk_ids.length > 0) lines.push(`Bulk id${summary.bulk_ids.length === 1 ? '' : 's'}: ${summary.bulk_ids.join(', ')}`);
  return lines.join('\n');
}

const showCancel = (result: BulkCancel) =>
  fields([
    ['Bulk', result.bulk_id],
    ['Canceled', result.canceled],
    ['Not cancelable', result.not_cancelable],
  ]);

function cancelCommand(): Command {
  return customerOptions(
    new Command('cancel')
      .description('Cancel the messages of a bulk request not yet handed to an upstream: they end failed (canceled) and are refunded')
      .argument('<bulk-id>', 'bulk_..., from the summary of dispatch bulk (one per request of up to 1,000)')
      .addHelpText(
        'after',
        `
Prints how many messages were canceled (by this cancel or an earlier one) and how many were not
cancelable (already handed to an upstream, or failed at acceptance); they go their way. Exits 0
either way; an unknown bulk id exits 1.`,
      ),
  ).action((bulkId: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const result = await (await sdk()).messages.cancelBulk(bulkId);
      out.result(result, () => showCancel(result));
    }),
  );
}

/**
 * Fails as commander fails a missing required option. --csv, --from and --body are not declared
 * required, since commander would then require them of `bulk cancel` too (it checks a
 * subcommand's ancestors' required options).
 */
function requireOptions(command: Command, names: string[]): void {
  for (const option of command.options)
    if (names.includes(option.attributeName()) && command.getOptionValue(option.attributeName()) === undefined)
      command.error(`error: required option '${option.flags}' not specified`, { code: 'commander.missingMandatoryOptionValue' });
}

function readInput(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export function bulkCommand(): Command {
  const bulk = customerOptions(
    scheduleFlags(
      new Command('bulk')
        .description('Send one body to every recipient of a CSV file (a header row, one recipient per row), at once or at --at; bulk cancel cancels one')
        .option('--csv <file>', "CSV file with a header row ('-' for stdin)")
        .option('--from <sender>', 'an approved sender ID of the account')
        .option('--body <text>', 'message text, up to 1,600 characters')
        .option('--column <name>', 'the column holding the E.164 numbers', 'to')
        .option('--reference <text>', 'your reference, set on every message')
        .option('--route-id <id>', 'send through this route only', positiveInteger)
        .option('--smart-encoding', 'replace characters GSM-7 lacks by look-alikes (curly quotes, dashes...) to send as GSM-7')
        .option('--no-smart-encoding', "send the body as given, whatever the account's setting"),
      'every message',
    )
      .option('--idempotency-key <prefix>', 'request n uses <prefix>-n, so that rerunning the same file never sends twice')
      .addOption(
        new Option(
          '--dry-run',
          'send nothing: show for every row the encoding, segments, route, cost and send time, or the refusal it would meet; exits 4 if some row would be refused',
        ).conflicts('idempotencyKey'),
      )
      .addHelpText(
        'after',
        `
Recipients go in requests of up to ${CHUNK_SIZE}, in file order. Rows that are not E.164 numbers
are not sent. A request refused whole (sender not approved, no balance, a limit reached) stops
the run; its rows and the later ones count as failed. The summary lists every failure by code
and the bulk id of each request (dispatch bulk cancel <bulk-id> cancels what has not gone yet);
--json prints it as an object: total, accepted, failed, failures {code: count}, cost, currency,
requests, bulk_ids, and items [{row, to, id, status, cost, error}] (row 1 = the first row after
the header).

--dry-run previews each request instead (nothing is stored or charged): --json prints total,
sendable, refused, cost, currency, requests, and recipients [{row, to, encoding, segments,
ucs2_characters, route_id, cost, send_at, refusal}]. Each request of up to ${CHUNK_SIZE} is checked
against the whole balance, not what the earlier ones would have spent.

Exits 0 when every recipient was accepted, 4 when some failed (--dry-run: would be refused), 1 or
3 when a request was refused (1) or Dispatch could not be reached (3).`,
      ),
  ).action((options: BulkOptions, command: Command) => {
    requireOptions(command, ['csv', 'from', 'body']);
    return run(command, async ({ sdk, out }) => {
      const recipients = readRecipients(readInput(options.csv), options.column);
      if (recipients.length === 0) throw new UsageError(`${options.csv} has no recipient rows`);
      const dispatch = await sdk();
      const common = messageFields(options);
      if (options.dryRun) {
        const preview = await previewBulk(recipients, options.body, (to) => dispatch.messages.preview({ recipients: to, ...common }));
        out.result(preview, () => showPreview(preview.recipients, preview));
        return preview.refused > 0 ? EXIT.partial : EXIT.ok;
      }
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
              { recipients: to, ...common },
              { idempotencyKey: options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}-${index + 1}` },
            ),
          (done, failed) => bar?.update(done, { failed }),
        );
      } finally {
        bar?.stop();
      }
      const { summary, stoppedBy } = outcome;
      out.result(summary, () => showSummary(summary));
      if (options.at !== undefined && summary.accepted > 0) out.note(`Scheduled for ${options.at}: dispatch bulk cancel <bulk-id> cancels it until then.`);
      if (stoppedBy) return out.fail(stoppedBy);
      return summary.failed > 0 ? EXIT.partial : EXIT.ok;
    });
  });
  // Its own options stop at `cancel`, so that `bulk cancel <id> --json` reaches cancel's --json
  // (the program's positional options hand bulk every argument after its name).
  return bulk.enablePositionalOptions().addCommand(cancelCommand());
}
