import type { Bench } from '../context.ts';
import { recipient } from '../load.ts';
import { count, ms, row, type Measurement } from '../report.ts';

/**
 * Scheduled sends at scale: an account holds `heldMessages` scheduled a month ahead, then 10,000
 * more fall due within one second (bulks of 1,000, evenly apart). Lateness is `sent_at - send_at`
 * of those, read from the messages once none is left pending.
 */
export async function measureScheduled(bench: Bench): Promise<Measurement> {
  const { heldMessages, dueMessages } = bench.options.durations;
  const tenant = await bench.tenant('scheduled', 10);
  const bulk = (i: number, sendAt: Date, reference: string) => {
    const recipients = Array.from({ length: 1000 }, (_, r) => recipient(i * 1000 + r));
    const body = { recipients, from: tenant.from, body: 'Your appointment is tomorrow at 09:00.', reference, send_at: sendAt.toISOString() };
    return bench.call('POST', '/messages/bulk', body, tenant.keys[i % tenant.keys.length]);
  };
  const [held, due, monthAhead] = [heldMessages / 1000, dueMessages / 1000, new Date(Date.now() + 30 * 86_400_000)];
  // Four bulks in flight at a time, so that a million take minutes rather than most of an hour.
  for (let i = 0; i < held; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].filter((j) => j < held).map((j) => bulk(j, monthAhead, 'bench-scheduled-held')));
  // Far enough ahead that every due bulk is accepted before the first falls due.
  const dueAt = Math.ceil((Date.now() + 75_000) / 1000) * 1000;
  for (let i = 0; i < due; i++) await bulk(held + i, new Date(dueAt + (i * 1000) / due), 'bench-scheduled-due');
  await new Promise((due) => setTimeout(due, dueAt + 1000 - Date.now())).then(bench.settle);
  const { rows } = await bench.pool.query<{ p: number[] | null; n: number; sent: number }>(
    `SELECT percentile_cont(ARRAY[0.5, 0.99, 1]) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - send_at) * 1000) AS p, count(*)::int AS n,
            count(sent_at)::int AS sent FROM messages WHERE account_id = $1 AND reference = 'bench-scheduled-due'`,
    [tenant.accountId],
  );
  const [p50, p99, max] = rows[0].p ?? [Number.NaN, Number.NaN, Number.NaN];
  const what = `${count(dueMessages)} messages due in one second, ${count(heldMessages)} more scheduled in the account: send_at to sent_at`;
  const measured = `p50 ${ms(p50)}, p99 ${ms(p99)}, max ${ms(max)}; ${count(rows[0].sent)} of ${count(rows[0].n)} sent`;
  const cells = { goal: 'p99 <= 2 s', pass: p99 <= 2000 && rows[0].sent === dueMessages };
  return { rows: [row('scheduled', what, measured, cells)], figures: { heldMessages, dueMessages, p50, p99, max, sent: rows[0].sent } };
}
