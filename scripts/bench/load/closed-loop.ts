import autocannon from 'autocannon';
import type { LoadJob } from './job.ts';
import type { Recorder } from './recorder.ts';
import { acceptedId, requestMaker } from './requests.ts';

/** `connections` connections, each sending its next request as soon as the last one is answered (autocannon). */
export async function closedLoop(job: LoadJob, recorder: Recorder, ids: string[] | undefined): Promise<number> {
  const make = requestMaker(job);
  let next = 0;
  const started = performance.now();
  const options: autocannon.Options = {
    // autocannon takes several URLs and spreads the connections over them; its types say one.
    url: job.urls as unknown as string,
    method: job.method,
    connections: job.connections,
    duration: job.durationSeconds,
    ...(job.maxRequests && { maxOverallRequests: job.maxRequests }),
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => {
          const { headers, body } = make(next++);
          return { ...request, headers: { ...request.headers, ...headers }, ...(body !== undefined && { body }) };
        },
        ...(ids && {
          onResponse: (status: number, body: string) => {
            const id = status >= 200 && status < 300 ? acceptedId(body) : undefined;
            if (id) ids.push(id);
          },
        }),
      },
    ],
  };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(options, (error, finished) => (error ? reject(error) : resolve(finished)));
    instance.on('response', (_client, status, _bytes, latencyMs) => recorder.answer(status, latencyMs, performance.now() - started));
  });
  recorder.errors = result.errors;
  // autocannon stops at the deadline without waiting for the answers in flight.
  recorder.unanswered = Math.max(0, result.requests.sent - recorder.answered - result.errors);
  return result.duration;
}
