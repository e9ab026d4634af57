import { log, type Bench, type Measurement } from '../context.ts';
import { count, ms, perSecond, refusals } from '../format.ts';
import { runLoadWarm } from '../load.ts';
import type { BigAccount } from './big-account.ts';

const CONNECTIONS = 8;
const TO = '+12127000042';

/** The four pages target 5 names, and the SQL that counts what each one's `pagination.total` must say. */
const QUERIES = [
  { name: 'first page', query: '', where: '', params: [] as string[] },
  { name: 'status filter', query: '?status=delivered', where: `AND status = $2`, params: ['delivered'] },
  { name: 'to filter', query: `?to=${encodeURIComponent(TO)}`, where: `AND "to" = $2`, params: [TO] },
  { name: 'page 1,000', query: '?page=1000', where: '', params: [] as string[] },
];

/** Whether the page's `pagination.total` equals the count of matching rows. */
async function totalIsExact(bench: Bench, big: BigAccount, query: (typeof QUERIES)[number]): Promise<{ exact: boolean; answered: number; counted: number }> {
  const response = await fetch(`${bench.apiUrls('/messages')[0]}${query.query}`, { headers: { authorization: `Bearer ${big.tenant.keys[0]}` } });
  const answered = ((await response.json()) as { pagination?: { total?: number } }).pagination?.total ?? Number.NaN;
  const { rows } = await bench.pool.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 ${query.where}`, [
    big.tenant.accountId,
    ...query.params,
  ]);
  return { exact: answered === rows[0].n, answered, counted: rows[0].n };
}

/** Target 5: GET /messages on the big account, closed loop, 8 connections, p99 of each page after a warm-up of it, and its total exact. */
export async function measureMessageList(bench: Bench, big: BigAccount): Promise<Measurement> {
  const { listSeconds: seconds, warmupSeconds } = bench.options.durations;
  const rows: Measurement['rows'] = [];
  const figures: Record<string, unknown> = { seeded: big.seeded };
  for (const query of QUERIES) {
    log(`5: GET /messages${query.query} (${query.name}), ${CONNECTIONS} connections, ${seconds} s after a warm-up of ${warmupSeconds} s`);
    const result = await runLoadWarm(
      { urls: bench.apiUrls(`/messages${query.query}`), method: 'GET', keys: big.tenant.keys, connections: CONNECTIONS, durationSeconds: seconds },
      warmupSeconds,
    );
    const total = await totalIsExact(bench, big, query);
    figures[query.name] = { result, total };
    rows.push({
      target: '5',
      what: `GET /messages ${query.name}, ${count(big.seeded)} messages, ${CONNECTIONS} connections`,
      measured: `p99 ${ms(result.latency.p99)} (p50 ${ms(result.latency.p50)}, ${perSecond(result.okPerSecond, 'req')}${refusals(result)}); total ${total.exact ? 'exact' : `${total.answered}, not ${total.counted}`}`,
      baseline: '',
      ratio: '',
      goal: '<= 50 ms, total exact',
      pass: result.latency.p99 <= 50 && total.exact,
    });
  }
  return { rows, figures };
}
