/**
 * The floor under target 1, run by the bench as its own process: a server that does only what a
 * message's life cannot do without. It answers POST /send once the message's row is committed,
 * submits it to the upstream over Dispatch's `http` protocol, records the upstream's id (`sent`)
 * and takes its delivery report on POST /dlr (`delivered`): the same three HTTP exchanges and the
 * same three writes of a row shaped like `messages`, with its indexes (`bench_messages`). Sends,
 * submit answers and reports that arrive together share one statement each, as Dispatch's
 * batches do. Nothing else: no authentication, validation, rate limit, balance, ledger, events,
 * counters, submission rows or jobs, and a message accepted before a crash is never sent. It is a
 * yardstick, not a design. Env: DATABASE_URL, PORT, UPSTREAM_URL, ACCOUNT_ID (the rows' account_id).
 */
import http from 'node:http';
import { text } from 'node:stream/consumers';
import pg from 'pg';
import { Batcher } from '../../lib/batcher.ts';
import { newId } from '../../domain/ids.ts';

const ROUTE_ID = 1;

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
const port = Number(process.env.PORT);
const upstream = new URL(process.env.UPSTREAM_URL as string);
const accountId = process.env.ACCOUNT_ID as string;
const dlrUrl = `http://127.0.0.1:${port}/dlr`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

interface Message {
  id: string;
  to: string;
  from: string;
  body: string;
}

/**
 * One statement per batch, one batch under way at a time (as Dispatch's group commit and report
 * batches run); `answers` reads each item's answer from the statement's rows.
 */
function batched<T, A = undefined>(
  statement: (items: T[]) => pg.QueryConfig,
  answers: (items: T[], rows: Record<string, unknown>[]) => A[] = (items) => items.map(() => undefined as A),
): Batcher<T, A> {
  return new Batcher<T, A>({
    run: async (items) => answers(items, (await pool.query(statement(items))).rows),
    maxInFlight: 1,
  });
}

const accepting = batched<Message>((messages) => ({
  name: 'accept',
  text: `INSERT INTO bench_messages (id, account_id, "to", "from", body, status, encoding, segments, cost, currency)
         SELECT id, $5, t, f, b, 'pending', 'GSM-7', 1, 0.0075, 'USD' FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS m (id, t, f, b)`,
  values: [messages.map(({ id }) => id), messages.map(({ to }) => to), messages.map(({ from }) => from), messages.map(({ body }) => body), accountId],
}));

const recordingSent = batched<{ id: string; providerId: string }>((sent) => ({
  name: 'sent',
  text: `UPDATE bench_messages m SET status = 'sent', route_id = ${ROUTE_ID}, provider_message_id = s.provider_id, sent_at = now()
         FROM unnest($1::text[], $2::text[]) AS s (id, provider_id) WHERE m.id = s.id`,
  values: [sent.map(({ id }) => id), sent.map(({ providerId }) => providerId)],
}));

/** Answers, for each upstream id, whether a sent message had it. */
const recordingDelivered = batched<string, boolean>(
  (providerIds) => ({
    name: 'delivered',
    text: `UPDATE bench_messages SET status = 'delivered', delivered_at = now() WHERE route_id = ${ROUTE_ID} AND provider_message_id = ANY($1::text[]) RETURNING provider_message_id`,
    values: [providerIds],
  }),
  (providerIds, rows) => {
    const found = new Set(rows.map((row) => row.provider_message_id));
    return providerIds.map((id) => found.has(id));
  },
);

function submit(message: Message): void {
  const request = http.request(
    upstream,
    { method: 'POST', agent, headers: { 'content-type': 'application/json', 'idempotency-key': message.id } },
    (response) => {
      void text(response)
        .then((body) => recordingSent.submit({ id: message.id, providerId: (JSON.parse(body) as { id: string }).id }))
        .catch((error: unknown) => console.error(`recording ${message.id} as sent failed:`, error));
    },
  );
  request.on('error', (error) => console.error(`submitting ${message.id} failed:`, error));
  request.end(
    JSON.stringify({ message_id: message.id, to: message.to, from: message.from, body: message.body, encoding: 'GSM-7', segments: 1, dlr_url: dlrUrl }),
  );
}

function answer(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  if (request.url === '/healthz') return answer(response, 200, { status: 'ok' });
  const body = JSON.parse(await text(request)) as Record<string, string>;
  if (request.url === '/dlr') {
    // A report can overtake the submit's answer, whose upstream id is not recorded yet: refused,
    // the upstream posts it again later, as providers retry a report that was not taken.
    if (!(await recordingDelivered.submit(body.id))) return answer(response, 409, { error: 'no sent message has this upstream id yet' });
    return answer(response, 200, {});
  }
  const message = { id: newId('msg'), to: body.to, from: body.from, body: body.body };
  await accepting.submit(message);
  answer(response, 201, { data: { id: message.id, status: 'pending' } });
  submit(message);
}

http
  .createServer((request, response) => {
    handle(request, response).catch((error: unknown) => answer(response, 500, { error: String(error) }));
  })
  .listen(port, '127.0.0.1');
