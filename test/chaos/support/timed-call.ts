import { contractCheckingFetch, type AnswerBody } from '../../support/client.ts';
import { ADMIN_TOKEN } from '../../support/harness.ts';

/**
 * What became of one request under faults. Unlike the test client's call(), nothing throws: a
 * load generator needs every outcome, counted, to say afterwards how many went which way.
 */
export type CallOutcome = { startedAt: number; endedAt: number } & (
  | { kind: 'answer'; status: number; body: AnswerBody; headers: Headers }
  /** No answer within the deadline: the request hung. */
  | { kind: 'timeout' }
  /** The connection was refused or cut (the process was killed). */
  | { kind: 'connection'; detail: string }
  /** An answer that openapi.yaml does not allow (an undeclared status, a body off its schema, not JSON). */
  | { kind: 'off-contract'; detail: string }
);

export interface TimedCallOptions {
  /** An API key, or 'admin' for the admin token. */
  auth?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Counted from the start of the request to the end of its body. */
  timeoutMs?: number;
}

/** One request to Dispatch, checked against openapi.yaml like every answer of the test client, with a deadline. */
export async function timedCall(baseUrl: string, method: string, path: string, options: TimedCallOptions = {}): Promise<CallOutcome> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.auth) headers.authorization = `Bearer ${options.auth === 'admin' ? ADMIN_TOKEN : options.auth}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const startedAt = Date.now();
  try {
    const response = await contractCheckingFetch(`${baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    // Checked against openapi.yaml by contractCheckingFetch.
    const body = (await response.json()) as AnswerBody;
    return { kind: 'answer', status: response.status, body, headers: response.headers, startedAt, endedAt: Date.now() };
  } catch (error) {
    const endedAt = Date.now();
    if (error instanceof Error && error.name === 'TimeoutError') return { kind: 'timeout', startedAt, endedAt };
    if (error instanceof TypeError && error.message === 'fetch failed') {
      const cause = (error.cause as { code?: string; message?: string } | undefined) ?? {};
      return { kind: 'connection', detail: cause.code ?? cause.message ?? 'fetch failed', startedAt, endedAt };
    }
    return { kind: 'off-contract', detail: error instanceof Error ? error.message : String(error), startedAt, endedAt };
  }
}

/** A one-line account of many outcomes, for failure messages: `201 x 480, 503 x 12, connection x 8`. */
export function tally(outcomes: CallOutcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const key = outcome.kind === 'answer' ? String(outcome.status) : outcome.kind;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key} x ${count}`).join(', ') || 'none';
}
