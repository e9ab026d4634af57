import { expect } from 'chai';
import { countBy, FINAL_STATES, messagesOf, moneyOf, strandedMessages } from './support/database-checks.ts';
import { eventually } from './support/eventually.ts';
import { scenario } from './support/figures.ts';
import { ReportingProvider } from './support/reporting-provider.ts';
import { startStage, type Stage } from './support/stage.ts';
import { SteadyLoad } from './support/steady-load.ts';
import { PRICE, SENDER, setUpTenant, type ChaosTenant } from './support/tenant.ts';
import { tally, timedCall, type CallOutcome } from './support/timed-call.ts';

/** A send every 50 ms: about 20 a second, through the outage and after it. */
const SEND_INTERVAL_MS = 50;
/** How many sends meet the database down: at 20 a second, an outage of about 7 s. */
const SENDS_DURING_OUTAGE = 150;
/** A request that has no answer after this long hangs; a deadline a client can live with. */
const ANSWER_WITHIN_MS = 5000;
const SETTLE_MS = 120_000;
const TO = '+14155550123';

const recorded = scenario('PostgreSQL stopped in immediate mode under load');

const isAnswer = (outcome: CallOutcome): outcome is CallOutcome & { kind: 'answer' } => outcome.kind === 'answer';
const is201 = (outcome: CallOutcome) => isAnswer(outcome) && outcome.status === 201;
const isRetryLater = (outcome: CallOutcome) => isAnswer(outcome) && outcome.status === 503 && /^[1-9]\d*$/.test(outcome.headers.get('retry-after') ?? '');
const describeOutcome = (outcome: CallOutcome) =>
  isAnswer(outcome)
    ? `${outcome.status} Retry-After=${outcome.headers.get('retry-after')} ${JSON.stringify(outcome.body.error ?? (outcome.body.data as { status?: string } | undefined)?.status)} (${outcome.body.meta?.request_id})`
    : `${outcome.kind}${'detail' in outcome ? `: ${outcome.detail.slice(0, 300)}` : ''}`;

describe('PostgreSQL stopped in immediate mode under load, then started again, with Dispatch left running', function () {
  this.timeout(10 * 60_000);
  let stage: Stage;
  let provider: ReportingProvider;
  let tenant: ChaosTenant;
  let load: SteadyLoad;
  let failed = false;
  let pid: number | undefined;
  /** When the database went down, when its start began, and when it took connections again. */
  const outage = { stoppedAt: 0, startingAt: 0, upAt: 0 };
  /** Why Dispatch did not take sends again after the outage, if it did not. */
  let notRecovered: string | undefined;

  const accepted = () => load.outcomes.filter(is201).map((outcome) => ((outcome as CallOutcome & { kind: 'answer' }).body.data as { id: string }).id);

  before(async () => {
    // Reports come 1.5 s after each accepting answer, so that many fall into the outage.
    provider = await ReportingProvider.start({ answer: () => ({ accept: true, delayMs: 100 }), reportDelayMs: 1500 });
    stage = await startStage('postgres-restart');
    tenant = await setUpTenant(stage.dispatch.baseUrl, { balance: 100, routes: [{ config: { url: provider.url, timeout_ms: 2000 }, priority: 1 }] });
    pid = stage.dispatch.pid;
    load = new SteadyLoad(
      (index) =>
        timedCall(stage.dispatch.baseUrl, 'POST', '/messages/send', {
          auth: tenant.key,
          body: { to: TO, from: SENDER, body: `Chaos outage ${index}` },
          timeoutMs: 2 * ANSWER_WITHIN_MS,
        }),
      SEND_INTERVAL_MS,
    );
    load.start();
    recorded.measure('open-loop send rate (per s)', 1000 / SEND_INTERVAL_MS);
    await eventually(
      'sends accepted and submitted before the outage',
      60_000,
      () => ({
        done: accepted().length >= 60 && provider.fake.requests.length >= 20,
        detail: `answers so far: ${tally(load.outcomes)}; submits: ${provider.fake.requests.length}`,
      }),
      50,
    );

    await stage.cluster.stopImmediately();
    outage.stoppedAt = Date.now();
    recorded.fault('PostgreSQL stopped in immediate mode');
    await eventually(
      'sends answered while PostgreSQL is down',
      120_000,
      () => {
        const during = load.startedBetween(outage.stoppedAt);
        return { done: during.length >= SENDS_DURING_OUTAGE, detail: `${during.length} finished so far: ${tally(during)}` };
      },
      50,
    );
    outage.startingAt = Date.now();
    await stage.cluster.start();
    outage.upAt = Date.now();
    recorded.databaseDown(outage.upAt - outage.stoppedAt);

    await eventually(
      'Dispatch answers sends 201 again',
      120_000,
      () => {
        const after = load.startedBetween(outage.upAt);
        return { done: after.filter(is201).length >= 40, detail: `since PostgreSQL is back: ${tally(after)}` };
      },
      100,
    ).catch((error: Error) => (notRecovered = error.message));
    await load.stop();
    recorded.outcomes(load.outcomes);
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') failed = true;
  });

  after(async () => {
    await load?.stop();
    await stage?.tearDown(failed);
    await provider?.stop();
  });

  it('answers 503 with a Retry-After to every send made while PostgreSQL is down', () => {
    const during = load.startedBetween(outage.stoppedAt, outage.startingAt).filter((outcome) => outcome.endedAt <= outage.startingAt);
    expect(during.length, 'sends that began and ended within the outage').to.be.above(0);
    const others = during.filter((outcome) => !isRetryLater(outcome));
    recorded.measure('sends begun and answered while the database was down', during.length);
    recorded.measure('of which 503 with Retry-After', during.length - others.length);
    expect(
      others.length,
      `${others.length} of ${during.length} sends during the outage were not 503 with Retry-After (${tally(others)}), e.g. ${others.slice(0, 3).map(describeOutcome).join(' | ')}`,
    ).to.equal(0);
  });

  it(`answers every send within ${ANSWER_WITHIN_MS / 1000} s, 201 or 503, before, during and after the outage: none hangs`, () => {
    const slow = load.outcomes.filter((outcome) => !isAnswer(outcome) || outcome.endedAt - outcome.startedAt > ANSWER_WITHIN_MS);
    recorded.measure(`answers slower than ${ANSWER_WITHIN_MS / 1000} s, or none`, slow.length);
    recorded.measure('slowest answer (ms)', Math.max(...load.outcomes.map((outcome) => outcome.endedAt - outcome.startedAt)));
    expect(
      slow.length,
      `${slow.length} of ${load.outcomes.length} sends hung or were cut: ${slow
        .slice(0, 3)
        .map(
          (outcome) => `${describeOutcome(outcome)} after ${outcome.endedAt - outcome.startedAt} ms, ${outcome.startedAt - outage.stoppedAt} ms after the stop`,
        )
        .join(' | ')}`,
    ).to.equal(0);
    const unexpected = load.outcomes.filter((outcome) => !is201(outcome) && !isRetryLater(outcome));
    expect(
      unexpected.length,
      `answers neither 201 nor 503 with Retry-After (${tally(unexpected)}), e.g. ${unexpected.slice(0, 3).map(describeOutcome).join(' | ')}`,
    ).to.equal(0);
  });

  it('recovers by itself once PostgreSQL is back: the same process answers 201 again', () => {
    expect(notRecovered, 'recovery').to.equal(undefined);
    expect(stage.dispatch.running, `Dispatch exited: ${stage.dispatch.logFile}`).to.equal(true);
    expect(stage.dispatch.pid).to.equal(pid);
  });

  it(`brings every message answered 201 to a final state within ${SETTLE_MS / 1000} s of the database's return`, async () => {
    const ids = new Set(accepted());
    await eventually(
      'every message final',
      Math.max(0, outage.upAt + SETTLE_MS - Date.now()),
      async () => {
        const rows = await messagesOf(stage.pool, tenant.accountId);
        const open = rows.filter((row) => !FINAL_STATES.includes(row.status));
        const missing = [...ids].filter((id) => !rows.some((row) => row.id === id));
        const stranded = await strandedMessages(stage.pool, tenant.accountId);
        recorded.messages({ accepted: ids.size, without_row: missing.length, not_final: open.length });
        return {
          done: open.length === 0 && missing.length === 0,
          detail:
            `${open.length} of ${rows.length} messages are not final (${JSON.stringify(countBy(open, (row) => row.status))}), ${stranded.length} of them pending with no live send job; ` +
            `${missing.length} of ${ids.size} messages answered 201 have no row. Log: ${stage.dispatch.logFile}`,
        };
      },
      1000,
    );
  });

  it('loses no delivery report: every report the provider posted is acknowledged, and each message ends as reported', async () => {
    await eventually(
      'every report acknowledged',
      60_000,
      () => {
        recorded.reports({ posted: provider.acknowledged.size + provider.unacknowledged, lost: provider.unacknowledged });
        return {
          done: provider.unacknowledged === 0,
          detail: `${provider.unacknowledged} reports are still refused or unanswered${provider.problems.length ? `; ${provider.problems[0]}` : ''}`,
        };
      },
      500,
    );
    const rows = new Map((await messagesOf(stage.pool, tenant.accountId)).map((row) => [row.id, row]));
    const wrong = [...provider.acknowledged].filter(([id, status]) => rows.get(id)?.status !== status);
    recorded.reports({ lost: wrong.length });
    expect(
      wrong.length,
      `${wrong.length} of ${provider.acknowledged.size} acknowledged reports are not in their message: ${wrong
        .slice(0, 5)
        .map(([id, status]) => `${id} reported ${status}, is ${rows.get(id)?.status} ${JSON.stringify(rows.get(id)?.error)}`)
        .join(' | ')}`,
    ).to.equal(0);
  });

  it('leaves no pending message without a live send job', async () => {
    const stranded = await strandedMessages(stage.pool, tenant.accountId);
    recorded.messages({ stranded: stranded.length });
    expect(stranded).to.deep.equal([]);
  });

  it('submits no message twice across the outage', () => {
    const twice = [...provider.submitCounts()].filter(([, count]) => count > 1);
    recorded.messages({ duplicated: twice.length });
    expect(twice.length, `messages submitted more than once: ${JSON.stringify(twice.slice(0, 10))}`).to.equal(0);
  });

  it('keeps the balance equal to the sum of the ledger and to the credits less the cost of every message not refunded', async () => {
    const money = await moneyOf(stage.pool, tenant.accountId, PRICE);
    expect(money.balance, 'balance against the ledger').to.equal(money.ledger);
    expect(money.balance, 'balance against credits less the messages not refunded').to.equal(money.expected);
  });
});
