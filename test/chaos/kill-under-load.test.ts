import { expect } from 'chai';
import { keyLockName } from '../../db/idempotency.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { countBy, eventIdsOf, FINAL_STATES, messagesOf, moneyOf, strandedMessages } from './support/database-checks.ts';
import { eventually } from './support/eventually.ts';
import { scenario } from './support/figures.ts';
import { ReportingProvider } from './support/reporting-provider.ts';
import { startStage, type Stage } from './support/stage.ts';
import { PRICE, SENDER, setUpTenant, type ChaosTenant } from './support/tenant.ts';
import { tally, timedCall, type CallOutcome } from './support/timed-call.ts';

const SENDS = 500;
const CLIENTS = 20;
/** The documented bound within which every accepted message reaches a final state after a restart. */
const SETTLE_MS = 120_000;
/** A claim of an Idempotency-Key whose request died is taken over after 120 s; retries wait that out. */
const RESEND_DEADLINE_MS = 200_000;
const TO = '+14155550123';

const recorded = scenario('kill -9 under load');

const is201 = (outcome: CallOutcome | undefined): outcome is CallOutcome & { kind: 'answer' } => outcome?.kind === 'answer' && outcome.status === 201;

describe('Dispatch killed with kill -9 under load, then restarted on the same database', function () {
  this.timeout(15 * 60_000);
  let stage: Stage;
  let primary: ReportingProvider;
  let backup: ReportingProvider;
  let receiver: WebhookReceiver;
  let tenant: ChaosTenant;
  let failed = false;
  /** The first answer to each send, and the one it ended with after the client's retries. */
  const firstTry: CallOutcome[] = [];
  const lastTry: CallOutcome[] = [];
  /** Every send made, retries included, for the run's figures. */
  const allTries: CallOutcome[] = [];
  let atKill = { accepted: 0, submitted: 0, webhooks: 0 };
  let restartedAt = 0;

  const send = async (index: number) => {
    const outcome = await timedCall(stage.dispatch.baseUrl, 'POST', '/messages/send', {
      auth: tenant.key,
      body: { to: TO, from: SENDER, body: `Chaos kill ${index}` },
      headers: { 'Idempotency-Key': `kill-${index}` },
      timeoutMs: 30_000,
    });
    allTries.push(outcome);
    return outcome;
  };

  /** A client's retry under the same Idempotency-Key: after a cut connection, a 409 (the first claim is still held) or a 5xx. */
  const worthRetrying = (outcome: CallOutcome) =>
    outcome.kind === 'connection' || outcome.kind === 'timeout' || (outcome.kind === 'answer' && (outcome.status === 409 || outcome.status >= 500));

  /**
   * A 409 says the send cut by the kill still holds its Idempotency-Key: its lock lives as long as
   * the dead process's database session, which PostgreSQL ends when it finds the connection gone.
   */
  const untilKeyReleased = (key: string) =>
    eventually(`Idempotency-Key ${key} released`, RESEND_DEADLINE_MS, async () => {
      const { rows } = await stage.pool.query(
        `SELECT 1 FROM pg_locks l, (SELECT hashtextextended($1, 0) AS h) k
          WHERE l.locktype = 'advisory' AND l.granted AND l.classid::bigint = (k.h >> 32) & 4294967295 AND l.objid::bigint = k.h & 4294967295`,
        [keyLockName(tenant.accountId, key)],
      );
      return { done: rows.length === 0, detail: 'the key is still locked' };
    });

  const acceptedIds = () => new Set(lastTry.filter(is201).map((outcome) => (outcome.body.data as { id: string }).id));

  before(async () => {
    // Every fifth message is reported undelivered; submits take up to half a second, so many are in flight at the kill.
    primary = await ReportingProvider.start({
      answer: (_, index) => ({ accept: true, delayMs: 50 + ((index * 37) % 450) }),
      outcome: (messageId) => (messageId.charCodeAt(messageId.length - 1) % 5 === 0 ? 'undelivered' : 'delivered'),
      reportDelayMs: 300,
    });
    backup = await ReportingProvider.start();
    // A healthy receiver: its faults are another test's; here every event must survive the crash alone.
    receiver = await WebhookReceiver.start();
    stage = await startStage('kill-under-load');
    tenant = await setUpTenant(stage.dispatch.baseUrl, {
      balance: 100,
      routes: [
        { config: { url: primary.url, timeout_ms: 2000 }, priority: 1 },
        { config: { url: backup.url, timeout_ms: 2000 }, priority: 2 },
      ],
      webhookUrl: receiver.url,
    });

    // Clients in parallel, each sending one message after another: the load lasts long enough for submits and webhooks to overlap it.
    recorded.measure('sends, each under its own Idempotency-Key', SENDS);
    recorded.measure('clients sending in parallel', CLIENTS);
    let next = 0;
    const sends = Array.from({ length: CLIENTS }, async () => {
      for (let index = next++; index < SENDS; index = next++) firstTry[index] = await send(index);
    });
    await eventually(
      'sends accepted, submitted and their webhooks under way, so that the kill lands mid-load',
      120_000,
      () => {
        atKill = { accepted: firstTry.filter(is201).length, submitted: primary.fake.requests.length, webhooks: receiver.received.length };
        // Should every send be answered first, the kill still comes, and the first test says it came too late.
        const allAnswered = firstTry.filter(Boolean).length === SENDS;
        return { done: allAnswered || (atKill.accepted >= 200 && atKill.submitted >= 30 && atKill.webhooks >= 10), detail: JSON.stringify(atKill) };
      },
      10,
    );
    await stage.dispatch.kill();
    recorded.fault('kill -9 of Dispatch');
    recorded.measure('sends accepted before the kill', atKill.accepted);
    recorded.measure('submits made before the kill', atKill.submitted);
    recorded.measure('webhooks received before the kill', atKill.webhooks);
    await Promise.all(sends);

    await stage.dispatch.restart();
    restartedAt = Date.now();
    await Promise.all(
      firstTry.map(async (outcome, index) => {
        const deadline = restartedAt + RESEND_DEADLINE_MS;
        while (worthRetrying(outcome) && Date.now() < deadline) {
          if (outcome.kind === 'answer' && outcome.status === 409) await untilKeyReleased(`kill-${index}`);
          outcome = await send(index);
        }
        lastTry[index] = outcome;
      }),
    );
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async () => {
    await stage?.tearDown(failed);
    await Promise.all([primary?.stop(), backup?.stop(), receiver?.stop()]);
  });

  it('answers every send 201 in the end, the ones the kill cut once they are retried with their Idempotency-Key', () => {
    const cut = firstTry.filter((outcome) => !is201(outcome));
    recorded.outcomes(allTries);
    recorded.measure('first tries the kill cut (then retried)', cut.length);
    expect(cut.length, `the kill came after every send was answered (${tally(firstTry)}), so it did not land mid-load`).to.be.above(0);
    expect(tally(lastTry), `first tries: ${tally(firstTry)}; at the kill: ${JSON.stringify(atKill)}`).to.equal(`201 x ${SENDS}`);
    expect(acceptedIds().size, 'distinct message ids among the 201 answers: a retried send must answer its original message').to.equal(SENDS);
  });

  it(`brings every accepted message to delivered, undelivered, or failed with provider_timeout, within ${SETTLE_MS / 1000} s of the restart`, async () => {
    const settledBy = Math.max(restartedAt, ...lastTry.filter(is201).map((outcome) => outcome.endedAt)) + SETTLE_MS;
    const accepted = acceptedIds();
    await eventually(
      'every accepted message final',
      Math.max(0, settledBy - Date.now()),
      async () => {
        const rows = (await messagesOf(stage.pool, tenant.accountId)).filter((row) => accepted.has(row.id));
        const open = rows.filter((row) => !FINAL_STATES.includes(row.status));
        const stranded = await strandedMessages(stage.pool, tenant.accountId);
        const problems = [...primary.problems, ...backup.problems];
        recorded.messages({ accepted: accepted.size, not_final: open.length, stranded: stranded.length });
        return {
          done: open.length === 0 && rows.length === accepted.size,
          detail:
            `${open.length} of ${accepted.size} accepted messages are not final (${JSON.stringify(countBy(open, (row) => row.status))}); ` +
            `${accepted.size - rows.length} have no row; ${stranded.length} pending ones have no live send job; ` +
            `the providers still wait to have ${primary.unacknowledged + backup.unacknowledged} delivery reports acknowledged` +
            `${problems.length ? `; ${problems.length} reports could not be posted, e.g. ${problems[0]}` : ''}. Log: ${stage.dispatch.logFile}`,
        };
      },
      1000,
    );
    const failures = (await messagesOf(stage.pool, tenant.accountId)).filter((row) => row.status === 'failed');
    const otherFailures = failures.filter((row) => row.error?.code !== 'provider_timeout');
    expect(
      otherFailures.map((row) => `${row.id}: ${JSON.stringify(row.error)}`),
      'failed messages whose error is not provider_timeout (the only failure a crash may cause here)',
    ).to.deep.equal([]);
  });

  it('loses no accepted message and makes none up: the account has exactly the messages answered 201', async () => {
    const rows = await messagesOf(stage.pool, tenant.accountId);
    const accepted = acceptedIds();
    recorded.messages({ without_row: [...accepted].filter((id) => !rows.some((row) => row.id === id)).length });
    expect(
      rows.filter((row) => !accepted.has(row.id)).map((row) => row.id),
      'message rows no send was answered with',
    ).to.deep.equal([]);
    expect(
      [...accepted].filter((id) => !rows.some((row) => row.id === id)),
      'messages answered 201 that have no row',
    ).to.deep.equal([]);
    expect(rows.length).to.equal(SENDS);
  });

  it('submits no message twice to the route, nor to the second route after the first', () => {
    const counts = new Map(primary.submitCounts());
    for (const [id, count] of backup.submitCounts()) counts.set(id, (counts.get(id) ?? 0) + count);
    const twice = [...counts].filter(([, count]) => count > 1);
    recorded.messages({ duplicated: twice.length });
    expect(twice.length, `messages submitted more than once: ${JSON.stringify(twice.slice(0, 10))}`).to.equal(0);
    expect(backup.fake.requests.length, 'submits to the backup route, which only an unknown outcome wrongly failed over could cause').to.equal(0);
  });

  it('delivers every event of the account to the webhook receiver at least once', async () => {
    await eventually(
      'every event delivered',
      120_000,
      async () => {
        const received = new Set(receiver.received.map((delivery) => delivery.event.id));
        const events = await eventIdsOf(stage.pool, tenant.accountId);
        const missing = events.filter((event) => !received.has(event.id));
        recorded.events({ emitted: events.length, not_delivered: missing.length });
        return {
          done: missing.length === 0,
          detail: `${missing.length} events never reached the receiver (${JSON.stringify(countBy(missing, (event) => event.type))}), e.g. ${missing[0]?.id}`,
        };
      },
      500,
    );
  });

  it('keeps the balance equal to the sum of the ledger and to the credits less the cost of every message not refunded', async () => {
    const money = await moneyOf(stage.pool, tenant.accountId, PRICE);
    expect(money.balance, 'balance against the ledger').to.equal(money.ledger);
    expect(money.balance, 'balance against credits less the messages not refunded').to.equal(money.expected);
  });
});
