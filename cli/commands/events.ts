// dispatch events tail: prints events as they happen, until Ctrl-C.
import { Command, Option } from 'commander';
import { customerOptions, positiveInteger, run, timestamp } from '../context.ts';
import { follow } from '../follow.ts';
import { EXIT } from '../output.ts';
import { EventTail, type Event } from '../tail.ts';
import type { Page } from '../../sdk/index.ts';

const TYPES = ['message.sent', 'message.delivered', 'message.failed'] as const;

const eventLine = (event: Event) =>
  [
    event.created_at,
    event.type.padEnd(17),
    event.data.id,
    event.data.to,
    event.data.status,
    event.data.error ? `${event.data.error.code}: ${event.data.error.message}` : '',
    event.data.reference ? `ref ${event.data.reference}` : '',
  ]
    .filter((part) => part !== '')
    .join('  ');

interface TailCommandOptions {
  type?: Event['type'];
  interval: number;
  since?: string;
}

export function eventsCommand(): Command {
  const events = new Command('events').description('Follow message events (delivery reports)');

  customerOptions(
    events
      .command('tail')
      .description('Print events as they happen, oldest first, until Ctrl-C (--json: one JSON object per line)')
      .addOption(new Option('--type <type>', 'only events of this type').choices(TYPES))
      .option('--interval <ms>', 'polling interval in milliseconds', positiveInteger, 1000)
      .option('--since <date-time>', 'start from this time instead of now (events are kept 30 days)', timestamp),
  ).action((options: TailCommandOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const dispatch = await sdk();
      const since = options.since === undefined ? Date.now() : Date.parse(options.since);
      // Without a type, or with a message type, GET /events lists message events only.
      const list = (page: number) =>
        dispatch.events.list({ page, limit: 100, ...(options.type !== undefined && { type: options.type }) }) as Promise<Page<Event>>;
      const tail = new EventTail({ since, list });
      out.note(`Following events since ${new Date(since).toISOString()} (Ctrl-C to stop)`);
      await follow(out, () => tail.poll(), eventLine, options.interval);
      return EXIT.ok;
    }),
  );

  return events;
}
