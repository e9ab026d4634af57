import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { log, type Bench, type Measurement } from '../context.ts';
import { percentile, round } from '../percentiles.ts';
import type { Tenant } from '../tenant.ts';

const HANGING_ACCOUNTS = 5;
const HANGING_PER_ACCOUNT = 10;
/** Each message makes two events (sent, delivered), each reaching the account's 10 endpoints: 300 deliveries. */
const MESSAGES_PER_HANGING_ACCOUNT = 3;
/** The measured account's messages, each phase: two events each. */
const MESSAGES = 100;
const MESSAGES_PER_SECOND = 20;
/** The prompt endpoint's p99 with the hangs, against without: it has workers of its own, so no worse than this. */
const GOAL_RATIO = 1.5;

/** A webhook receiver in this process that answers 200 and notes each event's arrival, or holds every request open. */
class Receiver {
  readonly arrivals = new Map<string, number>();
  readonly #held = new Set<ServerResponse>();
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(hang: boolean): Promise<Receiver> {
    const server = createServer();
    const receiver = new Receiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (hang) return void receiver.#held.add(res);
        receiver.arrivals.set((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id, Date.now());
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }

  get open(): number {
    return this.#held.size;
  }

  async stop(): Promise<void> {
    for (const res of this.#held) res.destroy();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

async function api(bench: Bench, key: string, method: string, path: string, body?: object): Promise<any> {
  const response = await fetch(`${bench.dispatch[0].baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response.status === 204 ? undefined : ((await response.json()) as { data: unknown }).data;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not so within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The reference of this target's messages, which the totals check counts like every other load's. */
const REFERENCE = 'bench-webhooks';

async function send(bench: Bench, tenant: Tenant, n: number): Promise<void> {
  await api(bench, tenant.keys[0], 'POST', '/messages/send', {
    to: `+1212700${String(n % 10_000).padStart(4, '0')}`,
    from: tenant.from,
    body: `Webhook ${n}`,
    reference: REFERENCE,
  });
  const sent = bench.sends.get(REFERENCE) ?? { accepted: 0, unanswered: 0 };
  bench.sends.set(REFERENCE, { ...sent, accepted: sent.accepted + 1 });
}

/** Sends MESSAGES at a steady rate and answers each of their events' time from creation (the database's clock) to arrival. */
async function eventLatencies(bench: Bench, tenant: Tenant, receiver: Receiver): Promise<number[]> {
  const seen = receiver.arrivals.size;
  for (let n = 0; n < MESSAGES; n++) {
    await send(bench, tenant, n);
    await new Promise((resolve) => setTimeout(resolve, 1000 / MESSAGES_PER_SECOND));
  }
  await until('every event of the measured account received', () => receiver.arrivals.size >= seen + 2 * MESSAGES);
  const ids = [...receiver.arrivals.keys()].slice(seen);
  const { rows } = await bench.pool.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM events WHERE id = ANY($1)', [ids]);
  return rows.map((row) => receiver.arrivals.get(row.id)! - row.created_at.getTime()).sort((a, b) => a - b);
}

/**
 * Another account's webhook deliveries while 50 endpoints of five accounts hang with 300
 * deliveries between them: the event-to-delivery p99 of a prompt endpoint, against the same
 * measured just before without the hangs, and how long a new endpoint's first event takes.
 */
export async function measureWebhookIsolation(bench: Bench): Promise<Measurement> {
  const receivers: Receiver[] = [];
  const receiver = async (hang: boolean) => {
    const started = await Receiver.start(hang);
    receivers.push(started);
    return started;
  };
  const endpoint = async (tenant: Tenant, target: Receiver) =>
    (await api(bench, tenant.keys[0], 'POST', '/webhooks/create', { url: target.url })) as { id: string };
  try {
    const measured = await bench.tenant('webhooks-measured', 1);
    const prompt = await receiver(false);
    await endpoint(measured, prompt);
    await send(bench, measured, 0);
    await until('the measured endpoint prompt', () => prompt.arrivals.size >= 2);
    log(`webhooks: ${MESSAGES} messages at ${MESSAGES_PER_SECOND}/s to an account with a prompt endpoint, alone`);
    const alone = await eventLatencies(bench, measured, prompt);

    log(`webhooks: ${HANGING_ACCOUNTS * HANGING_PER_ACCOUNT} endpoints of ${HANGING_ACCOUNTS} accounts that hang, 300 deliveries between them`);
    const hanging: Receiver[] = [];
    for (let a = 0; a < HANGING_ACCOUNTS; a++) {
      const tenant = await bench.tenant(`webhooks-hanging-${a}`, 1);
      for (let e = 0; e < HANGING_PER_ACCOUNT; e++) {
        const target = await receiver(true);
        hanging.push(target);
        await endpoint(tenant, target);
      }
      for (let n = 0; n < MESSAGES_PER_HANGING_ACCOUNT; n++) await send(bench, tenant, n);
    }
    await until('the hanging endpoints holding the shared workers', () => hanging.reduce((sum, target) => sum + target.open, 0) >= 16);
    log(`webhooks: the same ${MESSAGES} messages beside them, and a new endpoint of a third account`);
    const newcomer = await bench.tenant('webhooks-new', 1);
    const fresh = await receiver(false);
    await endpoint(newcomer, fresh);
    const [beside] = await Promise.all([eventLatencies(bench, measured, prompt), send(bench, newcomer, 0)]);
    await until('the new endpoint served', () => fresh.arrivals.size > 0);
    const { rows } = await bench.pool.query<{ created_at: Date }>('SELECT created_at FROM events WHERE id = $1', [[...fresh.arrivals.keys()][0]]);
    const firstEventMs = [...fresh.arrivals.values()][0] - rows[0].created_at.getTime();

    const p99Alone = percentile(alone, 99);
    const p99Beside = percentile(beside, 99);
    const ratio = p99Beside / Math.max(p99Alone, 1);
    return {
      rows: [
        {
          target: 'webhooks',
          what: "another account's event-to-delivery p99, 50 endpoints hanging vs none",
          measured: `${round(p99Beside)} ms`,
          baseline: `${round(p99Alone)} ms`,
          ratio: ratio.toFixed(2),
          goal: `<= ${GOAL_RATIO}`,
          pass: ratio <= GOAL_RATIO,
        },
        {
          target: 'webhooks',
          what: "a new endpoint's first event beside them",
          measured: `${Math.round(firstEventMs)} ms`,
          baseline: '',
          ratio: '',
          goal: '<= 1 deadline (10 s) + 1 s',
          pass: firstEventMs <= 11_000,
        },
      ],
      figures: {
        p50_alone_ms: percentile(alone, 50),
        p99_alone_ms: p99Alone,
        p50_beside_ms: percentile(beside, 50),
        p99_beside_ms: p99Beside,
        new_endpoint_first_event_ms: firstEventMs,
      },
    };
  } finally {
    await Promise.all(receivers.map((target) => target.stop()));
  }
}
