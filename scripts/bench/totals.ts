/**
 * After the loads: every accepted message stored once, none submitted upstream twice or left pending,
 * and a key's rate limit held exactly across however many processes served it.
 */
import { readFile } from 'node:fs/promises';
import type { Bench } from './context.ts';
import { runLoad } from './load.ts';
import { pendingCount } from './message-log.ts';
import { describeProcesses } from './processes.ts';
import { count, row, type Measurement } from './report.ts';

const RATE_LIMIT = 100;
const ID_CHUNK = 20_000;

export async function checkTotals(bench: Bench): Promise<Measurement> {
  await bench.settle();
  const files = [...bench.sends.values()].flatMap((send) => (send.idsFile ? [send.idsFile] : []));
  const ids = (await Promise.all(files.map((file) => readFile(file, 'utf8')))).flatMap((text) => (text === '' ? [] : text.split('\n')));
  const distinct = new Set(ids).size;
  let existing = 0;
  for (let i = 0; i < ids.length; i += ID_CHUNK)
    existing += (await bench.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::text[])', [ids.slice(i, i + ID_CHUNK)]))
      .rows[0].n;
  const { rows } = await bench.pool.query<{ reference: string; n: number; submitted: number }>(
    `SELECT reference, count(*)::int AS n, count(provider_message_id)::int AS submitted
       FROM messages WHERE reference LIKE 'bench-%' AND reference <> 'bench-seed' GROUP BY reference`,
  );
  const stored = new Map(rows.map(({ reference, n }) => [reference, n]));
  const recordedSubmits = rows.reduce((sum, { submitted }) => sum + submitted, 0);
  // A closed loop stops at its deadline with requests in flight: those may be stored without an answer.
  const mismatched = [...bench.sends]
    .filter(([reference, send]) => (stored.get(reference) ?? 0) < send.accepted || (stored.get(reference) ?? 0) > send.accepted + send.unanswered)
    .map(([reference, send]) => `${reference}: ${send.accepted} accepted and ${send.unanswered} unanswered, ${stored.get(reference) ?? 0} stored`);
  const sum = (field: 'accepted' | 'unanswered') => [...bench.sends.values()].reduce((total, send) => total + send[field], 0);
  const upstream = await bench.upstream.stats();
  const pending = await pendingCount(bench.pool);
  const tenant = await bench.tenant('rate-limit', 1);
  const [key] = await bench.createKeys(tenant.accountId, 1, { rate_limit: RATE_LIMIT });
  const burst = { urls: bench.apiUrls('/account'), method: 'GET' as const, keys: [key.plain_key], connections: 16, durationSeconds: 1 };
  const limit = await runLoad({ ...burst, ratePerSecond: RATE_LIMIT * 3 });
  const refused = limit.statuses['429'] ?? 0;
  const processes = describeProcesses(bench.dispatch);
  const stores = `${count(sum('accepted'))} accepted (${count(existing)} of ${count(ids.length)} ids found, ${count(ids.length - distinct)} repeated), ${count(sum('unanswered'))} cut unanswered at a deadline`;
  const submits = `${count(upstream.submits)} submits of ${count(upstream.distinct)} messages, ${count(upstream.submittedTwice)} twice; ${count(recordedSubmits)} recorded as sent; ${count(pending)} pending`;
  const storedOnce = existing === ids.length && distinct === ids.length && mismatched.length === 0;
  const sentOnce = upstream.submittedTwice === 0 && upstream.submits === upstream.distinct && upstream.distinct === recordedSubmits && pending === 0;
  const limitHeld = limit.ok === RATE_LIMIT && limit.ok + refused === limit.requests;
  const rateLimit = { allowed: limit.ok, refused, sent: limit.requests };
  return {
    rows: [
      row('totals', `every accepted message stored once (${processes})`, [stores, ...mismatched].join('; '), { goal: 'all, once', pass: storedOnce }),
      row('totals', `no message submitted upstream twice (${processes})`, submits, { goal: 'each once, none left', pass: sentOnce }),
      row(
        'totals',
        `a key's rate limit of ${RATE_LIMIT}/min, ${RATE_LIMIT * 3} requests at once (${processes})`,
        `${limit.ok} allowed, ${refused} refused with 429`,
        {
          goal: `exactly ${RATE_LIMIT} allowed`,
          pass: limitHeld,
        },
      ),
    ],
    figures: { ids: ids.length, distinct, existing, mismatched, upstream, recordedSubmits, pending, rateLimit },
  };
}
