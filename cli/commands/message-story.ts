// dispatch messages story <id>: everything that happened to one message, in order. With an admin
// token, through the admin API (a message of any account); with only an API key, through the
// customer API (a message of the key's account). Both answer the same story.
import { Command, Option } from 'commander';
import type { MessageStory } from '../admin-client.ts';
import { adminOptions, run } from '../context.ts';
import { money, table } from '../output.ts';
import { showMessage } from './messages.ts';

type Entry = MessageStory['entries'][number];

/** One line of what an entry says, for the human table. */
function entryText(entry: Entry): string {
  switch (entry.kind) {
    case 'status':
      return entry.status;
    case 'attempt':
      return `#${entry.attempt} to route ${entry.route_id}: ${entry.outcome}${entry.error_code ? ` (${entry.error_code}${entry.error_message ? `: ${entry.error_message}` : ''})` : ''}`;
    case 'event':
      return `${entry.type} ${entry.event_id}`;
    case 'webhook_delivery': {
      const attempt = entry.webhook_attempt;
      const outcome = attempt.succeeded ? 'delivered' : `failed${attempt.error ? ` (${attempt.error})` : ''}`;
      return `${attempt.event_id} to ${attempt.endpoint_id}, try ${attempt.attempt}: ${outcome}${attempt.status_code === null ? '' : `, HTTP ${attempt.status_code}`}`;
    }
    case 'ledger': {
      const transaction = entry.transaction;
      return `${transaction.type} ${money(transaction.amount, transaction.currency)}, balance ${money(transaction.balance_after, transaction.currency)}`;
    }
    default:
      // A kind added after this CLI was built.
      return '';
  }
}

export function messageStoryCommand(): Command {
  return adminOptions(
    new Command('story')
      .description(
        "Tell what happened to a message, in order: statuses, upstream attempts, events, webhook deliveries, charges (any account's with the admin token, else your own with an API key)",
      )
      .argument('<message-id>', 'msg_...')
      .addOption(new Option('--api-key <key>', 'an API key, ds_live_... [env: DISPATCH_API_KEY]').helpGroup('Connection options:')),
  ).action((id: string, _options: object, command: Command) =>
    run(command, async ({ admin, sdk, connection, out }) => {
      const story = (await connection()).adminToken ? await (await admin()).messageStory(id) : await (await sdk()).messages.story(id);
      out.result(
        story,
        () =>
          `${showMessage(story.message)}\nAccount  ${story.message.account_id}\n\n${table(
            ['At', 'Kind', 'What'],
            story.entries.map((entry) => [entry.at, entry.kind, entryText(entry)]),
          )}`,
      );
    }),
  );
}
