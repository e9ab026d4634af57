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
const shown = (request: FuzzRequest) => JSON.stringify({ ...request, auth: request.auth === 'admin' ? 'admin' : 'key', rawBody: clip(request.rawBody), body: clip(JSON.stringify(request.body)) });

/** No 5xx, and a validation refusal never shows a regular expression. */
function expectHandled(request: FuzzRequest, response: ApiResponse): void {
  expect(response.status, `answered ${JSON.stringify(response.body).slice(0, 500)} to ${shown(request)}`).to.be.below(500);
  if (response.status === 400) {
    // The field's own name may hold anything the fuzzer sent; the rest of the message may not show a pattern.
    const { message, param } = response.body.error;
    expect(param ? message.replaceAll(param, '') : message, shown(request)).to.not.match(/\(\^|\$\)|\[0-9\]/);
  }
}

/**
 * Fault test 6: for every operation of openapi.yaml, customer and admin, with valid
 * credentials, fast-check generates requests from the operation's schemas (valid ones, naming
 * rows that exist) and breaks them (every class of hostile input of defect 7, wrong types,
 * huge values, unknown fields, bodies that are not JSON). A failure is shrunk to the smallest
 * request that fails, and its seed is printed to replay it.
 */
export function describeFuzz(title: string, runs: { valid: number; mutated: number }): void {
  describe(title, function () {
    this.timeout(Math.max(60_000, (runs.valid + runs.mutated) * 2_000));
    let world: FuzzWorld;
    let operations: Map<string, Operation>;

    before(async () => {
      world = await createFuzzWorld();
      operations = new Map((await fuzzedOperations()).map((operation) => [operation.operationId as string, operation]));
    });

    for (const { operationId } of documentedOperations()) {
      it(`${operationId} answers every valid and mutated request without a 5xx, as the document declares`, async () => {
        const operation = operations.get(operationId) as Operation;
        for (const [requests, numRuns] of [[validRequests(world, operation), runs.valid], [mutatedRequests(world, operation), runs.mutated]] as const) {
          await fc.assert(
            fc.asyncProperty(requests, async (request) => {
              expectHandled(request, await send(request));
            }),
            { numRuns },
          );
        }
      });
    }
  });
}
