/**
 * After the load: every accepted message exists once, none was submitted upstream twice, none is
 * left pending, and a key's rate limit held exactly across however many processes served it.
 */
import { readFile } from 'node:fs/promises';
import { log, type Bench, type Measurement } from './context.ts';
import { count } from './format.ts';
import { runLoad } from './load.ts';
import { pendingCount } from './message-log.ts';

const RATE_LIMIT = 100;
const ID_CHUNK = 20_000;

async function acceptedIds(bench: Bench): Promise<string[]> {
  const files = [...bench.sends.values()].flatMap((send) => (send.idsFile ? [send.idsFile] : []));
  const texts = await Promise.all(files.map((file) => readFile(file, 'utf8')));
  return texts.flatMap((text) => (text === '' ? [] : text.split('\n')));
}

async function countExisting(bench: Bench, ids: string[]): Promise<number> {
  let found = 0;
  for (let i = 0; i < ids.length; i += ID_CHUNK) {
    const { rows } = await bench.pool.query('SELECT count(*)::int AS n FROM messages WHERE id = ANY($1::text[])', [ids.slice(i, i + ID_CHUNK)]);
    found += rows[0].n as number;
  }
  return found;
}

/** Fires three times a key's per-minute limit at once, spread over every process: exactly the limit may pass. */
async function rateLimitHolds(bench: Bench): Promise<{ allowed: number; refused: number; sent: number }> {
  const tenant = await bench.tenant('rate-limit', 1);
  const [key] = await bench.admin.createKeys(tenant.accountId, 1, { rate_limit: RATE_LIMIT });
  const result = await runLoad({
    urls: bench.apiUrls('/account'),
    method: 'GET',
    keys: [key.plain_key],
    connections: 16,
    durationSeconds: 1,
    ratePerSecond: RATE_LIMIT * 3,
  });
  return { allowed: result.ok, refused: result.statuses['429'] ?? 0, sent: result.requests };
}

export async function checkTotals(bench: Bench): Promise<Measurement> {
  log('totals: accepted messages, upstream submits, rate limit across processes');
  await bench.settle();
  const ids = await acceptedIds(bench);
  const distinct = new Set(ids).size;
  const existing = await countExisting(bench, ids);
  const { rows: byReference } = await bench.pool.query(
    `SELECT reference, count(*)::int AS n FROM messages WHERE reference LIKE 'bench-%' AND reference <> 'bench-seed' GROUP BY reference`,
  );
  const stored = new Map(byReference.map((row) => [row.reference as string, row.n as number]));
  // A closed loop stops at its deadline with requests in flight: those may be stored without an answer.
  const mismatched = [...bench.sends]
    .filter(([reference, send]) => (stored.get(reference) ?? 0) < send.accepted || (stored.get(reference) ?? 0) > send.accepted + send.unanswered)
    .map(([reference, send]) => `${reference}: ${send.accepted} accepted and ${send.unanswered} unanswered, ${stored.get(reference) ?? 0} stored`);
  const accepted = [...bench.sends.values()].reduce((sum, send) => sum + send.accepted, 0);
  const unanswered = [...bench.sends.values()].reduce((sum, send) => sum + send.unanswered, 0);
  const { rows: submittedRows } = await bench.pool.query(
    `SELECT count(*)::int AS n FROM messages WHERE reference LIKE 'bench-%' AND reference <> 'bench-seed' AND provider_message_id IS NOT NULL`,
  );
  const recordedSubmits = submittedRows[0].n as number;
  const upstream = await bench.upstream.stats();
  const pending = await pendingCount(bench.pool);
  const limit = await rateLimitHolds(bench);
  const processes = bench.describeProcesses();
  return {
    rows: [
      {
        target: 'totals',
        what: `every accepted message stored once (${processes})`,
        measured: `${count(accepted)} accepted (${count(existing)} of ${count(ids.length)} ids looked up found, ${count(ids.length - distinct)} repeated), ${count(unanswered)} cut unanswered at a deadline${mismatched.length ? `; ${mismatched.join('; ')}` : ''}`,
        baseline: '',
        ratio: '',
        goal: 'all, once',
        pass: existing === ids.length && distinct === ids.length && mismatched.length === 0,
      },
      {
        target: 'totals',
        what: `no message submitted upstream twice (${processes})`,
        measured: `${count(upstream.submits)} submits of ${count(upstream.distinct)} messages, ${count(upstream.submittedTwice)} twice; ${count(recordedSubmits)} recorded as sent; ${count(pending)} pending`,
        baseline: '',
        ratio: '',
        goal: 'each once, none left',
        pass: upstream.submittedTwice === 0 && upstream.submits === upstream.distinct && upstream.distinct === recordedSubmits && pending === 0,
      },
      {
        target: 'totals',
        what: `a key's rate limit of ${RATE_LIMIT}/min, ${RATE_LIMIT * 3} requests at once (${processes})`,
        measured: `${limit.allowed} allowed, ${limit.refused} refused with 429`,
        baseline: '',
        ratio: '',
        goal: `exactly ${RATE_LIMIT} allowed`,
        pass: limit.allowed === RATE_LIMIT && limit.allowed + limit.refused === limit.sent,
      },
    ],
    figures: { accepted, ids: ids.length, distinct, existing, mismatched, upstream, recordedSubmits, pending, rateLimit: limit },
  };
}
