/**
 * The floor under the send closed loop: a server doing only what a message's life cannot do without,
 * the same three HTTP exchanges (POST /send, a submit to the upstream, its report on POST /dlr) and
 * three writes of a row shaped like `messages` (`bench_messages`), batched as Dispatch batches. No
 * authentication, validation, rate limit, balance, ledger, events, counters or jobs, and a message
 * accepted before a crash is never sent: a yardstick, not a design. Env: DATABASE_URL, PORT,
 * UPSTREAM_URL, ACCOUNT_ID.
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
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

type Message = { id: string; to: string; from: string; body: string };
/** One statement per batch, one batch under way at a time, as Dispatch's group commit runs; `answers` reads each item's answer from the rows. */
function batched<T, A = undefined>(
  statement: (items: T[]) => pg.QueryConfig,
  answers: (items: T[], rows: Record<string, unknown>[]) => A[] = (items) => items.map(() => undefined as A),
): Batcher<T, A> {
  return new Batcher<T, A>({
    run: async (items) => answers(items, (await pool.query<Record<string, unknown>>(statement(items))).rows),
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
  (providerIds, rows) => providerIds.map((id) => rows.some((row) => row.provider_message_id === id)),
);

function submit({ id, to, from, body }: Message): void {
  const request = http.request(upstream, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'idempotency-key': id } }, (response) => {
    void text(response)
      .then((answer) => recordingSent.submit({ id, providerId: (JSON.parse(answer) as { id: string }).id }))
      .catch((error: unknown) => console.error(`recording ${id} as sent failed:`, error));
  });
  request.on('error', (error) => console.error(`submitting ${id} failed:`, error));
  request.end(JSON.stringify({ message_id: id, to, from, body, encoding: 'GSM-7', segments: 1, dlr_url: `http://127.0.0.1:${port}/dlr` }));
}

const answer = (response: http.ServerResponse, status: number, body: unknown) =>
  void response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  if (request.url === '/healthz') return answer(response, 200, { status: 'ok' });
  const body = JSON.parse(await text(request)) as Record<string, string>;
  if (request.url === '/dlr') {
    // A report can overtake the submit's answer, whose upstream id is not recorded yet: refused, the
    // upstream posts it again later, as providers retry a report that was not taken.
    const taken = await recordingDelivered.submit(body.id);
    return answer(response, taken ? 200 : 409, taken ? {} : { error: 'no sent message has this upstream id yet' });
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
