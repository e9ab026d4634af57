import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import type { Bench, Tenant } from '../context.ts';
import { latency } from '../load.ts';
import { log, ms, ratio, row, type Measurement } from '../report.ts';

/** The measured account's messages in each phase, two events (sent, delivered) each. */
const MESSAGES = 100;
const MESSAGES_PER_SECOND = 20;
/** The prompt endpoint has workers of its own, so its p99 beside the hangs is no worse than this against without. */
const GOAL_RATIO = 1.5;

/** A webhook receiver that answers 200 and notes when each event arrived, or, hanging, holds every request open. */
async function receiver(hang: boolean) {
  const arrivals = new Map<string, number>();
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    void text(request).then((body) => {
      if (hang) return void held.push(response);
      arrivals.set((JSON.parse(body) as { id: string }).id, Date.now());
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const stop = () => new Promise((resolve) => server.close(resolve).closeAllConnections());
  return { arrivals, held, stop, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` };
}
type Receiver = Awaited<ReturnType<typeof receiver>>;
async function until(what: string, check: () => boolean, timeoutMs = 120_000): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !check(); await new Promise((wake) => setTimeout(wake, 50)))
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs / 1000} s`);
}

/**
 * Another account's webhook deliveries while 50 endpoints of five accounts hang with 300 deliveries
 * between them: a prompt endpoint's event-to-delivery p99 against the same measured just before
 * without the hangs, and how long a new endpoint's first event takes beside them.
 */
export async function measureWebhooks(bench: Bench): Promise<Measurement> {
  const receivers: Receiver[] = [];
  const endpoint = async (tenant: Tenant, hang: boolean) => {
    const target = await receiver(hang);
    receivers.push(target);
    await bench.call('POST', '/webhooks/create', { url: target.url }, tenant.keys[0]);
    return target;
  };
  let sent = 0;
  const send = async (tenant: Tenant) => {
    const message = { to: `+1212700${String(sent++ % 10_000).padStart(4, '0')}`, from: tenant.from, body: 'Webhook', reference: 'bench-webhooks' };
    await bench.call('POST', '/messages/send', message, tenant.keys[0]);
    bench.sends.set('bench-webhooks', { accepted: sent, unanswered: 0 });
  };
  /** Each event's time from its creation, by the database's clock, to its arrival. */
  const sinceCreated = async (target: Receiver, ids: string[]) => {
    const { rows } = await bench.pool.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM events WHERE id = ANY($1)', [ids]);
    return rows.map((event) => target.arrivals.get(event.id)! - event.created_at.getTime());
  };
  const eventLatencies = async (tenant: Tenant, prompt: Receiver) => {
    const seen = prompt.arrivals.size;
    for (let n = 0; n < MESSAGES; n++) await Promise.all([send(tenant), new Promise((wake) => setTimeout(wake, 1000 / MESSAGES_PER_SECOND))]);
    await until('every event of the measured account received', () => prompt.arrivals.size >= seen + 2 * MESSAGES);
    return latency(await sinceCreated(prompt, [...prompt.arrivals.keys()].slice(seen)));
  };
  try {
    const measured = await bench.tenant('webhooks-measured', 1);
    const prompt = await endpoint(measured, false);
    await send(measured);
    await until('the measured endpoint served', () => prompt.arrivals.size >= 2);
    log(`webhooks: ${MESSAGES} messages at ${MESSAGES_PER_SECOND}/s to an account with a prompt endpoint, alone`);
    const without = await eventLatencies(measured, prompt);
    // Five accounts of ten endpoints each, and three messages each: 300 deliveries between them.
    const hanging: Receiver[] = [];
    for (let a = 0; a < 5; a++) {
      const tenant = await bench.tenant(`webhooks-hanging-${a}`, 1);
      for (let e = 0; e < 10; e++) hanging.push(await endpoint(tenant, true));
      for (let n = 0; n < 3; n++) await send(tenant);
    }
    await until('the hanging endpoints holding the shared workers', () => hanging.reduce((sum, target) => sum + target.held.length, 0) >= 16);
    log(`webhooks: the same ${MESSAGES} messages beside them, and a new endpoint of a third account`);
    const newcomer = await bench.tenant('webhooks-new', 1);
    const fresh = await endpoint(newcomer, false);
    const [beside] = await Promise.all([eventLatencies(measured, prompt), send(newcomer)]);
    await until('the new endpoint served', () => fresh.arrivals.size > 0);
    const [firstEventMs] = await sinceCreated(fresh, [...fresh.arrivals.keys()]);
    const times = beside.p99 / Math.max(without.p99, 1);
    const cells = { baseline: ms(without.p99), ratio: ratio(times), goal: `<= ${GOAL_RATIO}`, pass: times <= GOAL_RATIO };
    return {
      rows: [
        row('webhooks', "another account's event-to-delivery p99, 50 endpoints hanging vs none", ms(beside.p99), cells),
        row('webhooks', "a new endpoint's first event beside them", ms(firstEventMs), { goal: '<= 1 deadline (10 s) + 1 s', pass: firstEventMs <= 11_000 }),
      ],
      figures: { alone: { latency: without }, beside: { latency: beside }, new_endpoint_first_event_ms: firstEventMs },
    };
  } finally {
    await Promise.all(receivers.map((target) => target.stop()));
  }
}
