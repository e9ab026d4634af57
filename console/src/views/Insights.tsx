import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, unwrap, type Schemas } from '../api/client';
import { Chart } from '../components/Chart';
import { EmptyState } from '../components/EmptyState';
import { ErrorNotice } from '../components/ErrorNotice';
import { formatMoney, formatPercent } from '../lib/format';

type Group = Schemas['StatsGroup'];

const PERIODS = {
  day: { label: 'Last 24 hours', hours: 24, interval: 'hour' },
  week: { label: 'Last 7 days', hours: 24 * 7, interval: 'day' },
  month: { label: 'Last 30 days', hours: 24 * 30, interval: 'day' },
} as const;
type Period = keyof typeof PERIODS;

/** Opt-outs are read a page at a time up to this many to count the period's. */
const OPT_OUT_PAGES = 10;

function range(period: Period) {
  const to = new Date();
  // Whole hours, as the counters keep them: the same range for a minute, so that it is cached.
  to.setUTCMinutes(0, 0, 0);
  to.setUTCHours(to.getUTCHours() + 1);
  return { from: new Date(to.getTime() - PERIODS[period].hours * 3_600_000).toISOString(), to: to.toISOString() };
}

const periodLabel = (group: Group, interval: string) =>
  group.period_start ? (interval === 'hour' ? group.period_start.slice(11, 16) : group.period_start.slice(5, 10)) : '';

/** Opt-outs added within the range, from the newest pages of the list. */
async function optOutsIn(from: string, to: string): Promise<{ count: number; complete: boolean }> {
  let count = 0;
  for (let page = 1; page <= OPT_OUT_PAGES; page++) {
    const answer = await unwrap(api.GET('/opt-outs', { params: { query: { page, limit: 100 } } }));
    count += answer.data.filter((optOut) => optOut.created_at >= from && optOut.created_at < to).length;
    if (!answer.pagination.has_more) return { count, complete: true };
  }
  return { count, complete: false };
}

export function Insights() {
  const [period, setPeriod] = useState<Period>('day');
  const { from, to } = range(period);
  const interval = PERIODS[period].interval;
  const series = useQuery({ queryKey: ['stats', from, to, interval], queryFn: () => unwrap(api.GET('/stats', { params: { query: { from, to, interval } } })) });
  const byPlace = useQuery({
    queryKey: ['stats', from, to, 'route,country'],
    queryFn: () => unwrap(api.GET('/stats', { params: { query: { from, to, group_by: 'route,country' } } })),
  });
  const optOuts = useQuery({ queryKey: ['opt-outs-in', from, to], queryFn: () => optOutsIn(from, to) });

  const stats = series.data?.data;
  const groups = stats?.groups ?? [];
  const labels = groups.map((group) => periodLabel(group, interval));
  const totals = stats?.totals;
  const delivered = totals?.by_status.delivered ?? 0;
  const places = byPlace.data?.data.groups ?? [];
  const byCountry = new Map<string, number>();
  const byRoute = new Map<string, number>();
  for (const group of places) {
    const country = group.country ?? 'unknown';
    const route = group.route_id === null || group.route_id === undefined ? 'none' : `route ${group.route_id}`;
    byCountry.set(country, (byCountry.get(country) ?? 0) + group.messages);
    byRoute.set(route, (byRoute.get(route) ?? 0) + group.messages);
  }

  return (
    <>
      <div className="title-row">
        <h1>Insights</h1>
        <label>
          Period{' '}
          <select value={period} onChange={(event) => setPeriod(event.target.value as Period)}>
            {Object.entries(PERIODS).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNotice error={series.error ?? byPlace.error} />
      {totals && (
        <dl className="figures">
          <div>
            <dt>Messages</dt>
            <dd>{totals.messages}</dd>
          </div>
          <div>
            <dt>Delivery rate</dt>
            <dd>{formatPercent(totals.delivery_rate)}</dd>
          </div>
          <div>
            <dt>Latency p50 / p95</dt>
            <dd>
              {totals.latency_ms.p50 === null ? '—' : `${Math.round(totals.latency_ms.p50)} ms`} /{' '}
              {totals.latency_ms.p95 === null ? '—' : `${Math.round(totals.latency_ms.p95)} ms`}
            </dd>
          </div>
          <div>
            <dt>Cost</dt>
            <dd>{formatMoney(totals.cost, stats?.currency)}</dd>
          </div>
          <div>
            <dt>Opt-out rate</dt>
            <dd title="Opt-outs added in the period for each delivered message">
              {optOuts.data
                ? `${formatPercent(delivered > 0 ? optOuts.data.count / delivered : null)} (${optOuts.data.count}${optOuts.data.complete ? '' : '+'} opt-outs)`
                : '—'}
            </dd>
          </div>
        </dl>
      )}
      {totals && totals.messages === 0 && <EmptyState>No message in this period — send one, or choose a longer period.</EmptyState>}
      {totals && totals.messages > 0 && (
        <div className="charts">
          <section>
            <h2>Volume</h2>
            <Chart
              title="Messages by period and status"
              option={{
                tooltip: { trigger: 'axis' },
                legend: {},
                xAxis: { type: 'category', data: labels },
                yAxis: { type: 'value', minInterval: 1 },
                series: (['delivered', 'sent', 'pending', 'undelivered', 'failed'] as const).map((status) => ({
                  name: status,
                  type: 'bar',
                  stack: 'status',
                  data: groups.map((group) => group.by_status[status]),
                })),
              }}
            />
          </section>
          <section>
            <h2>Delivery rate</h2>
            <Chart
              title="Delivery rate by period"
              option={{
                tooltip: { trigger: 'axis' },
                xAxis: { type: 'category', data: labels },
                yAxis: { type: 'value', min: 0, max: 100, axisLabel: { formatter: '{value} %' } },
                series: [
                  { name: 'delivery rate', type: 'line', data: groups.map((group) => (group.delivery_rate === null ? null : group.delivery_rate * 100)) },
                ],
              }}
            />
          </section>
          <section>
            <h2>Latency, submit to delivered</h2>
            <Chart
              title="Latency p50 and p95 by period, in milliseconds"
              option={{
                tooltip: { trigger: 'axis' },
                legend: {},
                xAxis: { type: 'category', data: labels },
                yAxis: { type: 'value', axisLabel: { formatter: '{value} ms' } },
                series: (['p50', 'p95'] as const).map((percentile) => ({
                  name: percentile,
                  type: 'line',
                  data: groups.map((group) => group.latency_ms[percentile]),
                })),
              }}
            />
          </section>
          <section>
            <h2>Failures by code</h2>
            {totals.failures.length === 0 ? (
              <p>No failure in this period.</p>
            ) : (
              <Chart
                title="Failed and undelivered messages by error code"
                option={{
                  tooltip: {},
                  xAxis: { type: 'value', minInterval: 1 },
                  yAxis: { type: 'category', data: totals.failures.map((failure) => failure.code) },
                  series: [{ name: 'messages', type: 'bar', data: totals.failures.map((failure) => failure.count) }],
                }}
              />
            )}
          </section>
          <section>
            <h2>By country</h2>
            <Chart
              title="Messages by destination country"
              option={{ tooltip: {}, series: [{ type: 'pie', radius: '65%', data: [...byCountry].map(([name, value]) => ({ name, value })) }] }}
            />
          </section>
          <section>
            <h2>By route</h2>
            <Chart
              title="Messages by route"
              option={{
                tooltip: {},
                xAxis: { type: 'category', data: [...byRoute.keys()] },
                yAxis: { type: 'value', minInterval: 1 },
                series: [{ name: 'messages', type: 'bar', data: [...byRoute.values()] }],
              }}
            />
          </section>
        </div>
      )}
    </>
  );
}
