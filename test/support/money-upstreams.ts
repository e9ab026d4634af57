import type { HttpSubmitPayload } from '../../providers/http.ts';
import { FakeHttpProvider, type FakeBehaviour } from './fake-http-provider.ts';

/** How one upstream answers one submit, in the operator contract's cases. */
export type UpstreamAnswer = 'accept' | 'reject' | 'unavailable' | 'hang' | 'late' | 'reset';

export const UPSTREAM_ANSWERS: readonly UpstreamAnswer[] = ['accept', 'reject', 'unavailable', 'hang', 'late', 'reset'];

/** Answers after which the provider may have taken the message: the contract's unknown outcomes. */
export const UNKNOWN_OUTCOMES: ReadonlySet<UpstreamAnswer> = new Set(['hang', 'late', 'reset']);

/** Each route's `timeout_ms`: long enough that an instant answer is never late on a busy machine. */
export const UPSTREAM_TIMEOUT_MS = 1000;

/** The error code a rejecting upstream gives, which the message must carry. */
export const REJECTION_CODE = 'fake_rejected';

/** One submit as an upstream saw it, in order of arrival over every upstream. */
export interface Submission {
  messageId: string;
  /** The index of the route (and of its upstream) in priority order. */
  route: number;
  answer: UpstreamAnswer;
  /** The id the upstream gave, or would have given had Dispatch waited (`late`). */
  providerMessageId: string | null;
  dlrUrl: string;
}

/**
 * One fake HTTP provider per route, whose answers are planned per message body: a send plans
 * every route's answer under its body before the request is made, so the answer a message gets
 * does not depend on when a worker picks it up, and later changes of plan affect later sends only.
 */
export class PlannedUpstreams {
  readonly submissions: Submission[] = [];
  readonly #fakes: FakeHttpProvider[];
  readonly #plans = new Map<string, readonly UpstreamAnswer[]>();

  private constructor(fakes: FakeHttpProvider[]) {
    this.#fakes = fakes;
    fakes.forEach((fake, route) => fake.behave((body) => this.#answer(route, body)));
  }

  static async start(count: number): Promise<PlannedUpstreams> {
    return new PlannedUpstreams(await Promise.all(Array.from({ length: count }, () => FakeHttpProvider.start())));
  }

  /** The route config that points at the upstream of route `route`. */
  config(route: number): { url: string; timeout_ms: number } {
    return { url: this.#fakes[route].url, timeout_ms: UPSTREAM_TIMEOUT_MS };
  }

  /** Every route's answer to messages with this body (one per route, in priority order). */
  plan(body: string, answers: readonly UpstreamAnswer[]): void {
    this.#plans.set(body, [...answers]);
  }

  submissionsOf(messageId: string): Submission[] {
    return this.submissions.filter((submission) => submission.messageId === messageId);
  }

  /** Submits the upstream believes it took (so it may report on them). */
  taken(): Submission[] {
    return this.submissions.filter((submission) => submission.providerMessageId !== null);
  }

  async postReport(submission: Submission, status: string): Promise<Response> {
    return this.#fakes[submission.route].postReport(submission.dlrUrl, { id: submission.providerMessageId, status });
  }

  async stop(): Promise<void> {
    await Promise.all(this.#fakes.map((fake) => fake.stop()));
  }

  #answer(route: number, body: HttpSubmitPayload): FakeBehaviour {
    // An unplanned body is a mistake of the test; rejecting makes it visible in the outcome check.
    const answer = this.#plans.get(body?.body)?.[route] ?? 'reject';
    const providerMessageId = answer === 'accept' || answer === 'late' ? `up${route}-${body.message_id}` : null;
    this.submissions.push({ messageId: body?.message_id, route, answer, providerMessageId, dlrUrl: body?.dlr_url });
    switch (answer) {
      case 'accept':
        return { accept: true, id: providerMessageId as string };
      case 'late':
        return { accept: true, id: providerMessageId as string, delayMs: UPSTREAM_TIMEOUT_MS + 500 };
      case 'reject':
        return { status: 400, body: { error: { code: REJECTION_CODE, message: 'The fake upstream refused this message.' } } };
      case 'unavailable':
        return { status: 503, body: { error: { code: 'busy', message: 'Try another route.' } } };
      case 'hang':
        return { hang: true };
      case 'reset':
        return { reset: true };
    }
  }
}
