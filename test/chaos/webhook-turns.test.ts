import { expect } from 'chai';
import { call } from '../support/client.ts';
import { sendingTenant, type Tenant } from '../support/fixtures.ts';
import { WebhookReceiver, type Answer, type ReceivedDelivery } from '../support/webhook-receiver.ts';
import { eventually } from './support/eventually.ts';
import { scenario } from './support/figures.ts';
import { startStage, type Stage } from './support/stage.ts';

/** The settings under which the starvation was found: six attempts a second apart, a 1.5 s deadline. */
const SCHEDULE = [0, 1, 1, 1, 1, 1];
const TIMEOUT_MS = 1500;
const HANGING_ACCOUNTS = 5;
const HANGING_PER_ACCOUNT = 10;
/** Events per hanging account: each reaches its 10 endpoints, 300 deliveries in all. */
const EVENTS_PER_HANGING_ACCOUNT = 6;
/** How the failing endpoint answers: an error, slower than half the deadline, so it stays on probation. */
const FAILING_ANSWER: Answer = { status: 500, afterMs: 900 };
/** The bounds: each retry within its schedule plus one deadline plus 1 s; a new endpoint's first event within 2 s. */
const RETRY_LATENESS_BOUND_MS = TIMEOUT_MS + 1000;
const NEW_ENDPOINT_BOUND_MS = 2000;
const NEW_ENDPOINTS = 3;
const PROMPT_EVENTS = 20;
/** A prompt endpoint's deliveries never wait for a slot: far below one deadline, loaded machine or not. */
const PROMPT_P99_BOUND_MS = 1000;

const recorded = scenario("webhook turns: 50 hanging endpoints beside another account's failing, new and prompt endpoints");

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

describe('webhook turns while 50 endpoints of five accounts hang', function () {
  this.timeout(10 * 60_000);
  let stage: Stage;
  let failed = false;
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    stage = await startStage('webhook-turns', { WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(','), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async () => {
    for (const receiver of receivers) await receiver.stop();
    await stage?.tearDown(failed);
  });

  const baseUrl = () => stage.dispatch.baseUrl;
  const tenant = () => sendingTenant({ baseUrl: baseUrl(), balance: 100, routes: [{ config: { outcome: 'rejected' } }] });

  async function endpoint(account: Tenant, answer: Answer): Promise<{ receiver: WebhookReceiver; id: string }> {
    const receiver = await WebhookReceiver.start();
    receivers.push(receiver);
    receiver.answerWith(answer);
    const created = await call('POST', '/webhooks/create', { auth: account.key, baseUrl: baseUrl(), body: { url: receiver.url } });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    return { receiver, id: created.body.data.id };
  }

  /** One message that fails at once, so one message.failed event for every endpoint of the account. */
  async function emit(account: Tenant, count = 1): Promise<void> {
    const recipients = Array.from({ length: count }, (_, i) => `+1415555${String(7000 + i)}`);
    const sent = await call('POST', '/messages/bulk', { auth: account.key, baseUrl: baseUrl(), body: { recipients, from: 'Dispatch', body: 'Hello' } });
    recorded.answer(sent.status);
    expect(sent.status, JSON.stringify(sent.body)).to.equal(201);
  }

  /** From the event's creation, by the database's clock on this machine, to its receipt. */
  async function latencies(received: ReceivedDelivery[]): Promise<number[]> {
    const { rows } = await stage.pool.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM events WHERE id = ANY($1)', [
      received.map((delivery) => delivery.event.id),
    ]);
    const createdAt = new Map(rows.map((row) => [row.id, row.created_at.getTime()]));
    return received.map((delivery) => delivery.receivedAt - createdAt.get(delivery.event.id)!);
  }

  async function promptDeliveries(account: Tenant, receiver: WebhookReceiver): Promise<number[]> {
    const before = receiver.received.length;
    // One after another, each once the last is accepted: a steady trickle, not a burst.
    for (let i = 0; i < PROMPT_EVENTS; i++) await emit(account);
    await receiver.waitFor((received) => received.length === before + PROMPT_EVENTS, 60_000);
    return latencies(receiver.received.slice(before));
  }

  it("serves another account's failing, new and prompt endpoints on time while 50 endpoints hang with 300 deliveries", async () => {
    const promptAccount = await tenant();
    const prompt = await endpoint(promptAccount, 200);
    await emit(promptAccount);
    await prompt.receiver.waitFor((received) => received.length === 1, 30_000);
    const promptBefore = await promptDeliveries(promptAccount, prompt.receiver);

    const hanging: { receiver: WebhookReceiver; id: string }[] = [];
    for (let a = 0; a < HANGING_ACCOUNTS; a++) {
      const account = await tenant();
      for (let e = 0; e < HANGING_PER_ACCOUNT; e++) hanging.push(await endpoint(account, 'hang'));
      await emit(account, EVENTS_PER_HANGING_ACCOUNT);
    }
    const open = () => hanging.reduce((sum, { receiver }) => sum + receiver.openRequests, 0);
    await eventually('the hanging endpoints holding the shared slots', 60_000, () => ({ done: open() >= 16, detail: `${open()} open` }));
    const deliveries = HANGING_ACCOUNTS * HANGING_PER_ACCOUNT * EVENTS_PER_HANGING_ACCOUNT;
    await eventually('every delivery to the hanging endpoints queued', 60_000, async () => {
      const {
        rows: [{ count }],
      } = await stage.pool.query(`SELECT count(*)::int AS count FROM webhook_deliveries WHERE endpoint_id = ANY($1)`, [hanging.map(({ id }) => id)]);
      return { done: count === deliveries, detail: `${count} of ${deliveries}` };
    });

    const failingAccount = await tenant();
    const failing = await endpoint(failingAccount, FAILING_ANSWER);
    await emit(failingAccount);

    const newAccount = await tenant();
    const firstEvents: number[] = [];
    const promptDuring = promptDeliveries(promptAccount, prompt.receiver);
    for (let i = 0; i < NEW_ENDPOINTS; i++) {
      const fresh = await endpoint(newAccount, 200);
      await emit(newAccount);
      await fresh.receiver.waitFor((received) => received.length > 0, 30_000);
      firstEvents.push(...(await latencies(fresh.receiver.received.slice(0, 1))));
    }
    const promptFlood = await promptDuring;

    await failing.receiver.waitFor((received) => received.length === SCHEDULE.length, 60_000);
    const attempts = failing.receiver.received;
    // Each retry's lateness: from the end of the attempt before it (its answer came after afterMs) plus its place in the schedule.
    const lateness = attempts
      .slice(1)
      .map((attempt, n) => attempt.receivedAt - (attempts[n].receivedAt + (FAILING_ANSWER as { afterMs: number }).afterMs) - SCHEDULE[n + 1] * 1000);
    const stillOpen = open();
    const {
      rows: [{ count: hangingAttempts }],
    } = await stage.pool.query(`SELECT count(*)::int AS count FROM webhook_attempts WHERE endpoint_id = ANY($1)`, [hanging.map(({ id }) => id)]);

    const figures = {
      failing_retry_lateness_ms: lateness,
      new_endpoint_first_event_ms: firstEvents,
      prompt_p50_before_ms: percentile(promptBefore, 50),
      prompt_p99_before_ms: percentile(promptBefore, 99),
      prompt_p50_during_ms: percentile(promptFlood, 50),
      prompt_p99_during_ms: percentile(promptFlood, 99),
      hanging_requests_open_at_end: stillOpen,
      hanging_attempts_so_far: hangingAttempts,
    };
    process.stdout.write(`      figures: ${JSON.stringify(figures)}\n`);
    recorded.measure(`failing endpoint: retry lateness max (ms), bound ${RETRY_LATENESS_BOUND_MS}`, Math.max(...lateness));
    recorded.measure(`new endpoint: first event max (ms), bound ${NEW_ENDPOINT_BOUND_MS}`, Math.max(...firstEvents));
    recorded.measure('prompt endpoint: event to delivery p99 before the hangs (ms)', figures.prompt_p99_before_ms);
    recorded.measure(`prompt endpoint: event to delivery p99 during the hangs (ms), bound ${PROMPT_P99_BOUND_MS}`, figures.prompt_p99_during_ms);
    recorded.fault('webhook receiver hangs (endpoints)', hanging.length);

    // The hangs were still under way: the endpoints above were served beside them, not after them.
    expect(stillOpen).to.be.above(0);
    expect(hangingAttempts).to.be.below(deliveries * SCHEDULE.length);
    expect(attempts.map((attempt) => attempt.event.id)).to.deep.equal(SCHEDULE.map(() => attempts[0].event.id));
    for (const late of lateness) expect(late).to.be.below(RETRY_LATENESS_BOUND_MS);
    for (const first of firstEvents) expect(first).to.be.below(NEW_ENDPOINT_BOUND_MS);
    expect(figures.prompt_p99_during_ms).to.be.below(PROMPT_P99_BOUND_MS);
    await eventually('the failing delivery abandoned after its six attempts', 30_000, async () => {
      const {
        rows: [row],
      } = await stage.pool.query('SELECT status, attempts FROM webhook_deliveries WHERE endpoint_id = $1', [failing.id]);
      return { done: row?.status === 'abandoned', detail: JSON.stringify(row) };
    });
    // Exactly the schedule's attempts, none after the last.
    expect(failing.receiver.received).to.have.length(SCHEDULE.length);
    const { rows: attemptRows } = await stage.pool.query('SELECT attempt FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY attempt', [failing.id]);
    expect(attemptRows.map((row) => row.attempt)).to.deep.equal(SCHEDULE.map((_, n) => n + 1));
  });
});
