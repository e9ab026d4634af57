import { toUnits } from '../../domain/money.ts';
import { REJECTION_CODE, UNKNOWN_OUTCOMES, type UpstreamAnswer } from './money-upstreams.ts';

/** Where a message ends once the pipeline is quiet: carried by a route, or failed (and refunded). */
export interface Outcome {
  status: 'carried' | 'failed';
  /** The carrying route's index, for a carried message. */
  route: number | null;
  /** The error code, for a failed message. */
  code: string | null;
  /** The routes offered the message, in order. */
  tried: number[];
}

export const describeOutcome = (outcome: Outcome): string =>
  `${outcome.status === 'carried' ? `carried by route ${outcome.route}` : `failed ${outcome.code}`} after trying [${outcome.tried.join(', ')}]`;

/**
 * Every outcome the operator contract allows for a message whose routes (in priority order)
 * answer `answers`. The first route's price was charged at acceptance; a pricier route is offered
 * the message only when the balance covers the difference, which depends on what else is in
 * flight, so both branches are allowed. After an unknown outcome the message is submitted nowhere
 * again unless its route fails over on timeout (an idempotent route would retry itself, but only
 * on a later try). Nothing is retried later: the test runs with no job retries, so "no route
 * took it" fails the message.
 */
export function allowedOutcomes(answers: readonly UpstreamAnswer[], routes: readonly RouteSetup[], segments: number): Outcome[] {
  const priceOf = (route: number) => toUnits(routes[route].price) * BigInt(segments);
  const walk = (route: number, charged: bigint, tried: number[]): Outcome[] => {
    if (route === answers.length) return [{ status: 'failed', route: null, code: 'provider_unavailable', tried }];
    const price = priceOf(route);
    const skipped = price > charged ? walk(route + 1, charged, tried) : [];
    const offered = [...tried, route];
    const answer = answers[route];
    if (answer === 'accept') return [...skipped, { status: 'carried', route, code: null, tried: offered }];
    if (answer === 'reject') return [...skipped, { status: 'failed', route: null, code: REJECTION_CODE, tried: offered }];
    if (UNKNOWN_OUTCOMES.has(answer) && routes[route].afterUnknown !== 'fail_over')
      return [...skipped, { status: 'failed', route: null, code: 'provider_timeout', tried: offered }];
    return [...skipped, ...walk(route + 1, price > charged ? price : charged, offered)];
  };
  return walk(0, priceOf(0), []);
}

export const sameOutcome = (a: Outcome, b: Outcome): boolean =>
  a.status === b.status && a.route === b.route && a.code === b.code && a.tried.join() === b.tried.join();

export type ReportStatus = 'delivered' | 'undelivered' | 'failed';

export interface PostedReport {
  messageId: string;
  route: number;
  status: ReportStatus;
}

/** A carried message's status: its carrier's first report decides it, later ones change nothing. */
export function expectedCarriedStatus(reports: readonly PostedReport[], messageId: string, route: number): 'sent' | 'delivered' | 'undelivered' {
  const first = reports.find((report) => report.messageId === messageId && report.route === route);
  if (!first) return 'sent';
  return first.status === 'delivered' ? 'delivered' : 'undelivered';
}

/** One route of a run: its price per segment, and what its config says to do after an unknown outcome. */
export interface RouteSetup {
  price: string;
  afterUnknown: 'fail' | 'retry_same_route' | 'fail_over';
}

export interface RunScenario {
  /** The account's routes, in priority order. */
  routes: RouteSetup[];
  openingBalance: string;
}

/** What the test knows: money it put in, the answers planned per message, the reports it posted. */
export class MoneyModel {
  /** Opening balance plus every credit, in ten-thousandths. */
  credited: bigint;
  /** Each route's answer for the next send. */
  readonly answers: UpstreamAnswer[];
  readonly messages = new Map<string, { answers: readonly UpstreamAnswer[]; segments: number }>();
  readonly reports: PostedReport[] = [];
  readonly scenario: RunScenario;
  #bodies = 0;

  constructor(scenario: RunScenario) {
    this.scenario = scenario;
    this.credited = toUnits(scenario.openingBalance);
    this.answers = scenario.routes.map(() => 'accept');
  }

  /** A body no earlier send used, of `segments` GSM-7 segments (the upstreams plan by body). */
  nextBody(segments: number): string {
    const label = `Money ${++this.#bodies}.`;
    // 160 characters fit one segment; longer bodies are split into 153-character segments.
    const length = segments === 1 ? label.length : 153 * (segments - 1) + 10;
    return label.padEnd(length, ' x');
  }
}
