import { expect } from 'chai';
import fc from 'fast-check';
import type { Operation } from 'openapi-backend';
import { call, type ApiResponse } from '../support/client.ts';
import { documentedOperations } from '../support/operations.ts';
import { createFuzzWorld, fuzzedOperations, mutatedRequests, validRequests, type FuzzRequest, type FuzzWorld } from './requests.ts';

/**
 * Sends one request through the test client, which fails on any answer openapi.yaml does not
 * declare for the operation or whose body does not match it. A connection closed before any
 * answer is tried again twice: Node may close an idle keep-alive connection just as a request
 * arrives on it, which says nothing about the request.
 */
async function send(request: FuzzRequest): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(request.method, request.path, { auth: request.auth, body: request.body, rawBody: request.rawBody, headers: request.headers });
    } catch (error) {
      if (attempt === 3 || !(error instanceof TypeError && error.message === 'fetch failed')) throw error;
    }
  }
}

const clip = (text: string | undefined) => (text !== undefined && text.length > 300 ? `${text.slice(0, 300)}... (${text.length} characters)` : text);
const shown = (request: FuzzRequest) =>
  JSON.stringify({ ...request, auth: request.auth === 'admin' ? 'admin' : 'key', rawBody: clip(request.rawBody), body: clip(JSON.stringify(request.body)) });

/** The texts a request's body holds, at any depth. */
const textsOf = (value: unknown): string[] =>
  typeof value === 'string' ? [value] : value !== null && typeof value === 'object' ? Object.values(value).flatMap(textsOf) : [];

/** No 5xx, and a validation refusal never shows a regular expression. */
function expectHandled(request: FuzzRequest, response: ApiResponse): void {
  expect(response.status, `answered ${JSON.stringify(response.body).slice(0, 500)} to ${shown(request)}`).to.be.below(500);
  if (response.status === 400) {
    // The field's own name, and a value the message quotes back (a sender text), may hold
    // anything the fuzzer sent; the rest of the message may not show a pattern.
    const { message, param } = response.body.error;
    const echoed = [param, ...textsOf(request.body)].filter((text): text is string => typeof text === 'string' && text.length > 1);
    expect(
      echoed.reduce((rest: string, text) => rest.replaceAll(text, ''), message),
      shown(request),
    ).to.not.match(/\(\^|\$\)|\[0-9\]/);
  }
}

/** What one fuzzing run sent and saw: hostile inputs are the mutated requests. */
export interface FuzzCounts {
  valid: number;
  mutated: number;
  five_xx: number;
  /** Requests with no answer openapi.yaml allows, or none at all (the client throws, so their status is not counted above). */
  off_contract: number;
}

/**
 * Fault test 6: for every operation of openapi.yaml, customer and admin, with valid
 * credentials, fast-check generates requests from the operation's schemas (valid ones, naming
 * rows that exist) and breaks them (every class of hostile input of defect 7, wrong types,
 * huge values, unknown fields, bodies that are not JSON). A failure is shrunk to the smallest
 * request that fails, and its seed is printed to replay it. Every request sent, shrinking
 * included, is counted; the counts are printed after the run and handed to `onCounted`.
 */
export function describeFuzz(title: string, runs: { valid: number; mutated: number }, onCounted?: (counts: FuzzCounts) => void): void {
  describe(title, function () {
    this.timeout(Math.max(60_000, (runs.valid + runs.mutated) * 2_000));
    let world: FuzzWorld;
    let operations: Map<string, Operation>;
    const counts: FuzzCounts = { valid: 0, mutated: 0, five_xx: 0, off_contract: 0 };

    /** Sends the request and counts it, even when its answer fails the test. */
    async function counted(kind: 'valid' | 'mutated', request: FuzzRequest): Promise<ApiResponse> {
      counts[kind] += 1;
      try {
        const response = await send(request);
        if (response.status >= 500) counts.five_xx += 1;
        return response;
      } catch (error) {
        counts.off_contract += 1;
        throw error;
      }
    }

    before(async () => {
      world = await createFuzzWorld();
      operations = new Map((await fuzzedOperations()).map((operation) => [operation.operationId as string, operation]));
    });

    after(() => {
      const sent = counts.valid + counts.mutated;
      process.stdout.write(
        `      fuzzing sent ${sent.toLocaleString('en-US')} requests (${counts.valid.toLocaleString('en-US')} valid, ${counts.mutated.toLocaleString('en-US')} mutated); ${counts.five_xx} answered 5xx, ${counts.off_contract} off openapi.yaml\n`,
      );
      onCounted?.(counts);
    });

    for (const { operationId } of documentedOperations()) {
      it(`${operationId} answers ${runs.valid} valid and ${runs.mutated} mutated requests without a 5xx, as the document declares`, async () => {
        const operation = operations.get(operationId) as Operation;
        const kinds = [
          ['valid', validRequests(world, operation), runs.valid],
          ['mutated', mutatedRequests(world, operation), runs.mutated],
        ] as const;
        for (const [kind, requests, numRuns] of kinds) {
          await fc.assert(
            fc.asyncProperty(requests, async (request) => {
              expectHandled(request, await counted(kind, request));
            }),
            { numRuns },
          );
        }
      });
    }
  });
}
