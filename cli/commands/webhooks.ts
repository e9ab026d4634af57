// dispatch webhooks list|create|attempts|test|resend|rotate (customer API, through the SDK).
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Page, WebhookAttempt, WebhookEndpoint } from '../../sdk/index.ts';
import { customerOptions, integer, list, positiveInteger, run } from '../context.ts';
import { fields, pageTable, table } from '../output.ts';

/** The subscribable event types (openapi.yaml's CreateWebhookEndpointRequest). */
const EVENT_TYPES = ['*', 'message.sent', 'message.delivered', 'message.failed', 'message.received', 'recipient.opted_out', 'recipient.opted_in'];
const MAX_GRACE_SECONDS = 604_800;

const showEndpoints = (endpoints: WebhookEndpoint[]) =>
  endpoints.length === 0
    ? 'No webhook endpoints.'
    : table(
        ['ID', 'URL', 'Events', 'Active', 'Failures', 'Created'],
        endpoints.map((endpoint) => [endpoint.id, endpoint.url, endpoint.events.join(', '), endpoint.is_active, endpoint.failure_count, endpoint.created_at]),
      );

/** A secret is printed once by the API; say so where a person reads it. */
const showSecret = (pairs: [string, unknown][]) => `${fields(pairs)}\nKeep the signing secret now: it is never shown again.`;

const showAttempts = (page: Page<WebhookAttempt>) =>
  pageTable(page, ['delivery attempt', 'delivery attempts'], ['Time', 'Event', 'Attempt', 'Outcome', 'Status', 'Error', 'ms'], (attempt) => [
    attempt.created_at,
    attempt.event_id,
    attempt.attempt,
    attempt.succeeded ? 'ok' : 'failed',
    attempt.status_code,
    attempt.error,
    attempt.duration_ms,
  ]);

function graceSeconds(value: string): number {
  const seconds = integer(value);
  if (seconds < 0 || seconds > MAX_GRACE_SECONDS) throw new InvalidArgumentError(`Must be from 0 to ${MAX_GRACE_SECONDS} seconds.`);
  return seconds;
}

interface AttemptsOptions {
  event?: string;
  outcome?: 'ok' | 'failed';
  page?: number;
  limit?: number;
}

export function webhooksCommand(): Command {
  const webhooks = new Command('webhooks').description("The URLs your account's events are POSTed to: manage, try and inspect them");

  customerOptions(webhooks.command('list').description('List your webhook endpoints, newest first')).action((_options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const endpoints = await (await sdk()).webhooks.list();
      out.result(endpoints, () => showEndpoints(endpoints.data));
    }),
  );

  customerOptions(
    webhooks
      .command('create')
      .description('Register a URL to receive events; prints its signing secret, this once')
      .argument('<url>', 'http or https URL that answers 2xx')
      .addOption(new Option('--events <types>', `comma-separated event types (default *, every type): ${EVENT_TYPES.join(', ')}`).argParser(list))
      .option('--description <text>', 'a note for yourself'),
  ).action((url: string, options: { events?: string[]; description?: string }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const endpoint = await (
        await sdk()
      ).webhooks.create({
        url,
        ...(options.events !== undefined && { events: options.events as WebhookEndpoint['events'] }),
        ...(options.description !== undefined && { description: options.description }),
      });
      out.result(endpoint, () =>
        showSecret([
          ['id', endpoint.id],
          ['url', endpoint.url],
          ['events', endpoint.events],
          ['signing secret', endpoint.signing_secret],
        ]),
      );
    }),
  );

  customerOptions(
    webhooks
      .command('attempts')
      .description('List the delivery attempts to an endpoint, newest first (--json prints {data, pagination})')
      .argument('<id>', 'webhook endpoint id (whe_...)')
      .option('--event <id>', 'only the attempts to deliver this event (evt_...)')
      .addOption(new Option('--outcome <outcome>', 'only successful or only failed attempts').choices(['ok', 'failed']))
      .option('--page <n>', 'page number (default 1)', positiveInteger)
      .option('--limit <n>', 'attempts per page, 1 to 100 (default 50)', positiveInteger),
  ).action((id: string, options: AttemptsOptions, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const page = await (
        await sdk()
      ).webhooks.listAttempts(id, {
        ...(options.event !== undefined && { event_id: options.event }),
        ...(options.outcome !== undefined && { succeeded: options.outcome === 'ok' }),
        ...(options.page !== undefined && { page: options.page }),
        ...(options.limit !== undefined && { limit: options.limit }),
      });
      out.result(page, () => showAttempts(page));
    }),
  );

  customerOptions(
    webhooks
      .command('test')
      .description('Send a signed webhook.test event to an endpoint; see how it went with `dispatch webhooks attempts <id>`')
      .argument('<id>', 'webhook endpoint id (whe_...)'),
  ).action((id: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const event = await (await sdk()).webhooks.sendTest(id);
      out.result(event, () => `Sent test event ${event.id} to ${id}. Its delivery attempts: dispatch webhooks attempts ${id} --event ${event.id}`);
    }),
  );

  customerOptions(
    webhooks
      .command('resend')
      .description('Deliver an event of the last 30 days to an endpoint again, now, whatever it subscribes to (e.g. once a receiver that missed it is fixed)')
      .argument('<id>', 'webhook endpoint id (whe_...)')
      .argument('<event-id>', 'event id (evt_...)'),
  ).action((id: string, eventId: string, _options: object, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const resend = await (await sdk()).webhooks.resend(id, eventId);
      out.result(
        resend,
        () =>
          `Queued ${resend.event_type} event ${resend.event_id} for ${resend.endpoint_id}. Its delivery attempts: dispatch webhooks attempts ${resend.endpoint_id} --event ${resend.event_id}`,
      );
    }),
  );

  customerOptions(
    webhooks
      .command('rotate')
      .description("Replace an endpoint's signing secret; deliveries carry both signatures while the old one stays valid")
      .argument('<id>', 'webhook endpoint id (whe_...)')
      .option('--expires-in <seconds>', `how long the old secret stays valid, 0 to ${MAX_GRACE_SECONDS} (default 86400, one day; 0 ends it now)`, graceSeconds),
  ).action((id: string, options: { expiresIn?: number }, command: Command) =>
    run(command, async ({ sdk, out }) => {
      const endpoint = await (await sdk()).webhooks.rotateSecret(id, options.expiresIn === undefined ? {} : { expires_in_seconds: options.expiresIn });
      out.result(endpoint, () =>
        showSecret([
          ['id', endpoint.id],
          ['signing secret', endpoint.signing_secret],
          ['old secret valid until', endpoint.previous_secret_expires_at ?? 'no longer valid'],
        ]),
      );
    }),
  );

  return webhooks;
}
