import { expect } from 'chai';
import fc from 'fast-check';
import { toUnits } from '../../domain/money.ts';
import { call, expectError } from './client.ts';
import { harness } from './harness.ts';
import { expectMoneyConsistent, readMoney } from './money-ledger.ts';
import type { MoneyModel, ReportStatus } from './money-model.ts';
import { UPSTREAM_ANSWERS, type UpstreamAnswer } from './money-upstreams.ts';
import { expectOutcomes, NUMBERS, waitUntilQuiet, type MoneyWorld } from './money-world.ts';

type RecipientKind = 'valid' | 'blocklisted' | 'impossible' | 'malformed';

/** Every step ends by checking the money invariants on a snapshot, whatever is still in flight. */
abstract class MoneyCommand implements fc.AsyncCommand<MoneyModel, MoneyWorld> {
  check(): boolean {
    return true;
  }

  async run(model: MoneyModel, world: MoneyWorld): Promise<void> {
    await this.act(model, world);
    expectMoneyConsistent(await readMoney(harness.db, world.tenant.accountId), model.credited, this.toString());
  }

  protected abstract act(model: MoneyModel, world: MoneyWorld): Promise<void>;
  abstract toString(): string;
}

class Credit extends MoneyCommand {
  readonly amount: string;

  constructor(amount: string) {
    super();
    this.amount = amount;
  }

  protected async act(model: MoneyModel, world: MoneyWorld): Promise<void> {
    const response = await call('POST', `/admin/accounts/${world.tenant.accountId}/credit`, {
      auth: 'admin',
      body: { amount: Number(this.amount), description: 'Money property test' },
    });
    expect(response.status, JSON.stringify(response.body)).to.equal(200);
    model.credited += toUnits(this.amount);
  }

  toString(): string {
    return `credit ${this.amount}`;
  }
}

/** Sets how one route's upstream answers the sends that follow (`route` is taken modulo the run's routes). */
class Plan extends MoneyCommand {
  readonly route: number;
  readonly answer: UpstreamAnswer;

  constructor(route: number, answer: UpstreamAnswer) {
    super();
    this.route = route;
    this.answer = answer;
  }

  protected act(model: MoneyModel): Promise<void> {
    model.answers[this.route % model.answers.length] = this.answer;
    return Promise.resolve();
  }

  toString(): string {
    return `route #${this.route} answers ${this.answer}`;
  }
}

const recipientFor = (kind: RecipientKind, index: number): string => (kind === 'valid' ? NUMBERS.valid[index % NUMBERS.valid.length] : NUMBERS[kind]);

class Send extends MoneyCommand {
  readonly recipient: Exclude<RecipientKind, 'malformed'>;
  readonly segments: number;

  constructor(recipient: Exclude<RecipientKind, 'malformed'>, segments: number) {
    super();
    this.recipient = recipient;
    this.segments = segments;
  }

  protected async act(model: MoneyModel, world: MoneyWorld): Promise<void> {
    const body = model.nextBody(this.segments);
    world.upstreams.plan(body, model.answers);
    const response = await call('POST', '/messages/send', { auth: world.tenant.key, body: { to: recipientFor(this.recipient, 0), from: 'Dispatch', body } });
    if (this.recipient === 'blocklisted') return expectError(response, 400, 'recipient_blocklisted');
    if (this.recipient === 'impossible') return expectError(response, 400, 'number_invalid');
    if (response.status === 402) return expectError(response, 402, 'insufficient_balance');
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    model.messages.set(response.body.data.id, { answers: [...model.answers], segments: this.segments });
  }

  toString(): string {
    return `send ${this.segments} segment(s) to a ${this.recipient} number`;
  }
}

const EXPECTED_ITEM_ERRORS: Record<Exclude<RecipientKind, 'valid'>, string[]> = {
  blocklisted: ['recipient_blocklisted'],
  impossible: ['number_invalid'],
  // Whether a malformed recipient fails alone or refuses the whole request is issue 8's defect 12;
  // either way it must not cost anything.
  malformed: ['number_invalid', 'parameter_invalid'],
};

class Bulk extends MoneyCommand {
  readonly recipients: RecipientKind[];
  readonly segments: number;

  constructor(recipients: RecipientKind[], segments: number) {
    super();
    this.recipients = recipients;
    this.segments = segments;
  }

  protected async act(model: MoneyModel, world: MoneyWorld): Promise<void> {
    const body = model.nextBody(this.segments);
    world.upstreams.plan(body, model.answers);
    const recipients = this.recipients.map(recipientFor);
    const response = await call('POST', '/messages/bulk', { auth: world.tenant.key, body: { recipients, from: 'Dispatch', body } });
    if (response.status === 400 && this.recipients.includes('malformed')) return expectError(response, 400, 'parameter_invalid');
    if (response.status === 402) {
      expect(this.recipients, 'a bulk answered 402 without a sendable recipient').to.include('valid');
      return expectError(response, 402, 'insufficient_balance');
    }
    expect(response.status, JSON.stringify(response.body)).to.equal(201);
    const items = response.body.data.messages;
    expect(items).to.have.length(recipients.length);
    let balanceRanOut = false;
    items.forEach((item, index) => {
      const kind = this.recipients[index];
      const what = `item ${index} (${kind} ${recipients[index]}): ${JSON.stringify(item)}`;
      if (kind === 'valid' && item.status === 'pending' && !balanceRanOut) {
        model.messages.set(item.id, { answers: [...model.answers], segments: this.segments });
        return;
      }
      expect(item.status, what).to.equal('failed');
      expect(item.cost, what).to.equal(0);
      if (kind === 'valid') {
        // Recipients are charged in request order: once the balance ran out, every later one fails too.
        expect(item.error!.code, what).to.equal('insufficient_balance');
        balanceRanOut = true;
      } else {
        expect(EXPECTED_ITEM_ERRORS[kind], what).to.include(item.error!.code);
      }
    });
  }

  toString(): string {
    return `bulk of ${this.segments} segment(s) to [${this.recipients.join(', ')}]`;
  }
}

/** An upstream reports on one of the submits it took (`pick` modulo those), maybe before Dispatch recorded its answer. */
class Report extends MoneyCommand {
  readonly pick: number;
  readonly status: ReportStatus;

  constructor(pick: number, status: ReportStatus) {
    super();
    this.pick = pick;
    this.status = status;
  }

  protected async act(model: MoneyModel, world: MoneyWorld): Promise<void> {
    const taken = world.upstreams.taken();
    if (taken.length === 0) return;
    const submission = taken[this.pick % taken.length];
    const response = await world.upstreams.postReport(submission, this.status);
    expect(response.status, await response.clone().text()).to.equal(200);
    model.reports.push({ messageId: submission.messageId, route: submission.route, status: this.status });
  }

  toString(): string {
    return `report #${this.pick} ${this.status}`;
  }
}

/** Waits for the pipeline to be quiet, then checks where every message ended. */
class Settle extends MoneyCommand {
  protected async act(model: MoneyModel, world: MoneyWorld): Promise<void> {
    await settle(model, world);
  }

  toString(): string {
    return 'settle';
  }
}

export async function settle(model: MoneyModel, world: MoneyWorld): Promise<void> {
  await waitUntilQuiet(world);
  expectOutcomes(model, world, await readMoney(harness.db, world.tenant.accountId));
}

const segments = fc.integer({ min: 1, max: 3 });
const sendable = fc.constantFrom<Exclude<RecipientKind, 'malformed'>>('valid', 'valid', 'valid', 'blocklisted', 'impossible');
const recipient = fc.constantFrom<RecipientKind>('valid', 'valid', 'valid', 'blocklisted', 'impossible', 'malformed');

const send = fc.tuple(sendable, segments).map(([kind, count]) => new Send(kind, count));
// Retryable answers are listed thrice: failing over (to pricier and cheaper routes) is what moves money most.
const plan = fc
  .tuple(fc.nat({ max: 2 }), fc.constantFrom(...UPSTREAM_ANSWERS, 'accept', 'unavailable', 'unavailable'))
  .map(([route, answer]) => new Plan(route, answer));
const report = fc
  .tuple(fc.nat({ max: 20 }), fc.constantFrom<ReportStatus>('delivered', 'undelivered', 'failed'))
  .map(([pick, status]) => new Report(pick, status));

/** The steps a run interleaves; listing an arbitrary twice makes it twice as likely. */
export const moneyCommands = [
  fc.constantFrom('0.0100', '0.0500', '0.5000').map((amount) => new Credit(amount)),
  plan,
  plan,
  plan,
  send,
  send,
  send,
  fc.tuple(fc.array(recipient, { minLength: 1, maxLength: 4 }), segments).map(([kinds, count]) => new Bulk(kinds, count)),
  report,
  report,
  fc.constant(null).map(() => new Settle()),
];
