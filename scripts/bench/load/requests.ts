import type { LoadJob } from './job.ts';

export interface RequestParts {
  headers: Record<string, string>;
  body?: string;
}

/** A valid US number per request (+1 212 7xx xxxx, which libphonenumber accepts), a million apart before they repeat. */
export const recipient = (i: number): string => `+12127${String(i % 1_000_000).padStart(6, '0')}`;

/** Makes the i-th request's headers and body: the next key in turn, and for sends the next recipient. */
export function requestMaker(job: LoadJob): (i: number) => RequestParts {
  return (i) => {
    const headers: Record<string, string> = {};
    if (job.keys.length > 0) headers.authorization = `Bearer ${job.keys[i % job.keys.length]}`;
    if (!job.send) return { headers };
    headers['content-type'] = 'application/json';
    return { headers, body: JSON.stringify({ to: recipient(i), from: job.send.from, body: 'Your code is 482913.', reference: job.send.reference }) };
  };
}

/** The id of an accepted message in an answer's body, if it has one. */
export function acceptedId(body: string): string | undefined {
  try {
    return (JSON.parse(body) as { data?: { id?: string } }).data?.id;
  } catch {
    return undefined;
  }
}
