// dispatch events tail: prints events as they happen, until Ctrl-C.
import { Command, Option } from 'commander';
import { customerOptions, positiveInteger, run, timestamp } from '../context.ts';
import { EXIT, exitCodeFor, type Output } from '../output.ts';
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

/** Resolves after `ms`, or at once when `stopped` fires. */
function pause(ms: number, stopped: Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))), stopped]).finally(() => clearTimeout(timer));
}

async function follow(out: Output, tail: EventTail, intervalMs: number): Promise<void> {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  let running = true;
  const onSignal = () => {
    running = false;
    stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let healthy = false;
  try {
    while (running) {
      try {
        for (const event of await tail.poll()) out.item(event, () => eventLine(event));
        healthy = true;
      } catch (error) {
        // Refusals (a bad key, a missing scope) end the tail; once it has worked, an outage is waited out.
        if (!healthy || exitCodeFor(error) !== EXIT.unavailable) throw error;
        out.warn(`${error instanceof Error ? error.message : String(error)}; retrying`);
      }
      await pause(intervalMs, stopped);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
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
      const list = (page: number) => dispatch.events.list({ page, limit: 100, ...(options.type !== undefined && { type: options.type }) }) as Promise<Page<Event>>;
      const tail = new EventTail({ since, list });
      out.note(`Following events since ${new Date(since).toISOString()} (Ctrl-C to stop)`);
      await follow(out, tail, options.interval);
      return EXIT.ok;
    }),
  );

  return events;
}
