// dispatch opt-outs list|add|remove (customer API, through the SDK).
import { Command } from 'commander';
import type { OptOut, OptOutImportResult, Page } from '../../sdk/index.ts';
import { customerOptions, positiveInteger, run } from '../context.ts';
import { EXIT, pageTable } from '../output.ts';

const showPage = (page: Page<OptOut>) =>
  pageTable(page, ['opt-out', 'opt-outs'], ['Number', 'Source', 'Keyword', 'Reason', 'Created'], (optOut) => [
    optOut.number,
    optOut.source,
    optOut.keyword,
    optOut.reason,
    optOut.created_at,
  ]);

const showImport = (result: OptOutImportResult) =>
  [
    `Opted out ${result.added} number${result.added === 1 ? '' : 's'} (${result.unchanged} already opted out, ${result.failed} failed, ${result.total} given).`,
    ...result.results.filter((item) => item.error !== null).map((item) => `  ${item.number}: ${item.error!.message} (${item.error!.code})`),
  ].join('\n');

export function optOutsCommand(): Command {
  const optOuts = new Command('opt-outs').description('The numbers your account may not send to (STOP replies, imports)');

  customerOptions(
    optOuts
      .command('list')
      .description('List opted-out numbers, newest first (--json prints {data, pagination})')
      .option('--number <number>', 'only this number (E.164)')
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'opt-outs per page, 1 to 100 (default 50)', positiveInteger),
  ).action((options: { number?: string; page?: number; limit?: number }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (
        await sdk()
      ).optOuts.list({
        ...(options.number !== undefined && { number: options.number }),
        ...(options.page !== undefined && { page: options.page }),
        ...(options.limit !== undefined && { limit: options.limit }),
      });
      out.result(page, () => showPage(page));
    }),
  );

  customerOptions(
    optOuts
      .command('add')
      .description('Opt numbers out of every message from your account (up to 10,000); exits 4 when some number failed')
      .argument('<number...>', 'E.164 numbers, e.g. +447400123456')
      .option('--reason <text>', 'kept with each opt-out, e.g. "Imported from our previous provider"'),
  ).action((numbers: string[], options: { reason?: string }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const result = await (await sdk()).optOuts.create({ numbers, ...(options.reason !== undefined && { reason: options.reason }) });
      out.result(result, () => showImport(result));
      return result.failed > 0 ? EXIT.partial : EXIT.ok;
    }),
  );

  customerOptions(
    optOuts
      .command('remove')
      .description("Let your account send to a number again (only with the recipient's consent; they can also reply START)")
      .argument('<number>', 'E.164 number'),
  ).action((number: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const deleted = await (await sdk()).optOuts.delete(number);
      out.result(deleted, () => `Removed the opt-out of ${number}: messages to it are accepted again.`);
    }),
  );

  return optOuts;
}
