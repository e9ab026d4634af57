// The `dispatch` command: commander's tree of nouns and verbs, and how it ends (exit codes).
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { accountsCommand } from './commands/accounts.ts';
import { auditCommand } from './commands/audit.ts';
import { blocklistCommand } from './commands/blocklist.ts';
import { bulkCommand } from './commands/bulk.ts';
import { eventsCommand } from './commands/events.ts';
import { inboundCommand } from './commands/inbound.ts';
import { keysCommand } from './commands/keys.ts';
import { messageSearchCommand } from './commands/message-search.ts';
import { messageStoryCommand } from './commands/message-story.ts';
import { messagesCommand, sendCommand } from './commands/messages.ts';
import { balanceCommand, statsCommand, transactionsCommand, usageCommand } from './commands/money.ts';
import { migrateCommand } from './commands/migrate.ts';
import { operatorsCommand } from './commands/operators.ts';
import { optOutsCommand } from './commands/opt-outs.ts';
import { routesCommand } from './commands/routes.ts';
import { sendersCommand } from './commands/senders.ts';
import { serveCommand } from './commands/serve.ts';
import { webhooksCommand } from './commands/webhooks.ts';
import { EXIT, EXIT_CODES_HELP } from './output.ts';
import { SETTINGS_HELP } from './settings.ts';

const EXAMPLES = `Examples:
  $ dispatch serve
  $ dispatch send --to +447400123456 --from Dispatch --body "Hello"
  $ dispatch send --to +447400123456 --from Dispatch --body "Doors open at 10" --at 2031-05-20T09:00:00+01:00 --dry-run
  $ dispatch bulk --csv customers.csv --from Dispatch --body "Depot closed Monday"
  $ dispatch events tail --json | jq .type
  $ dispatch inbound tail
  $ dispatch opt-outs add +447400123456 --reason "Imported"
  $ dispatch accounts create --email ops@acme.example --name Acme --balance 25
  $ dispatch routes assign acct_... 1 --priority 10
  $ dispatch operators create --name "Dana (support)" --role support`;

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Settings every command of the tree shares; addCommand does not copy them, so they are applied to each. */
function configure(command: Command): void {
  command.exitOverride().showSuggestionAfterError().configureHelp({ sortSubcommands: false, showGlobalOptions: false });
  for (const sub of command.commands) configure(sub);
}

export function buildProgram(): Command {
  const program = new Command('dispatch')
    .description('Dispatch, the self-hostable SMS service: run it, operate it and send with it.')
    // Each command gets every argument after its name, so that `bulk`, which has options of its
    // own, can leave those after `bulk cancel` (--json, --url, --api-key) to cancel.
    .enablePositionalOptions()
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpCommand('help [command]', 'show help for a command')
    .addHelpText('after', `\n${EXAMPLES}\n\n${SETTINGS_HELP}\n\n${EXIT_CODES_HELP}\n\nEvery command takes --help; every command but serve takes --json.`);

  program.commandsGroup('Run Dispatch:');
  program.addCommand(serveCommand()).addCommand(migrateCommand());
  program.commandsGroup('Send (API key):');
  program
    .addCommand(sendCommand())
    .addCommand(bulkCommand())
    .addCommand(messagesCommand().addCommand(messageStoryCommand()).addCommand(messageSearchCommand()))
    .addCommand(eventsCommand())
    .addCommand(inboundCommand())
    .addCommand(optOutsCommand())
    .addCommand(webhooksCommand());
  program.addCommand(balanceCommand()).addCommand(transactionsCommand()).addCommand(usageCommand()).addCommand(statsCommand());
  program.commandsGroup('Operate (admin token):');
  program
    .addCommand(accountsCommand())
    .addCommand(keysCommand())
    .addCommand(routesCommand())
    .addCommand(sendersCommand())
    .addCommand(blocklistCommand())
    .addCommand(auditCommand())
    .addCommand(operatorsCommand());

  configure(program);
  return program;
}

/**
 * Parses `argv` (as process.argv) and runs the command. Answers the exit code of a usage error or
 * of help; a command's own result is on process.exitCode.
 */
export async function runCli(argv: string[]): Promise<number | undefined> {
  try {
    await buildProgram().parseAsync(argv);
    return undefined;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // --help and --version exit 0; a missing command, unknown option or bad value is a usage error.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
}
