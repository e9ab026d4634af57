import { useQuery } from '@tanstack/react-query';
import { api, unwrap, type Schemas } from '../../api/client';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatPercent } from '../../lib/format';

type Figures = Schemas['StatsFigures'];

const latency = (ms: number | null) => (ms === null ? '—' : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** The share of the route's submissions it accepted, with the counts behind it; '—' when nothing was submitted to it. */
function SubmitSuccess({ figures }: { figures: Figures | undefined }) {
  // Optional in the document: a Dispatch from before submissions were counted leaves them out.
  const submits = figures?.submits;
  const total = submits ? submits.accepted + submits.rejected + submits.retryable + submits.unknown : 0;
  if (!submits || total === 0) return <>—</>;
  return (
    <span title={`Accepted ${submits.accepted}, rejected ${submits.rejected}, refused for now ${submits.retryable}, no answer ${submits.unknown}`}>
      {formatPercent(figures?.submit_success_rate)}{' '}
      <span className="help">
        {submits.accepted}/{total}
      </span>
    </span>
  );
}

/**
 * Every route with its health over the last 24 hours, from the statistics grouped by route: how
 * many messages it carried, how many failed, the share of the submissions it accepted, its
 * delivery rate and latency, and its commonest failure. Which accounts use a route, and in which
 * order, is on each account's page.
 */
export function Routes() {
  const routes = useQuery({ queryKey: ['admin-routes'], queryFn: () => unwrap(api.GET('/admin/routes')) });
  const stats = useQuery({
    queryKey: ['admin-stats', 'route'],
    queryFn: () => unwrap(api.GET('/admin/stats', { params: { query: { group_by: 'route' } } })),
  });
  const byRoute = new Map<number | null | undefined, Figures>((stats.data?.data.groups ?? []).map((group) => [group.route_id, group]));
  const list = routes.data?.data.data ?? [];
  return (
    <>
      <h1>Routes</h1>
      <p className="help">Health over the last 24 hours. The accounts' assignments, in failover order, are on each account's page.</p>
      <ErrorNotice error={routes.error ?? stats.error} />
      {routes.data && list.length === 0 && <EmptyState>No route yet — an admin creates one through the API (POST /admin/routes).</EmptyState>}
      {list.length > 0 && (
        // Often wider than the window: its scrolled region takes the keyboard's focus, as no link or button in it could.
        <div className="table-wrap" tabIndex={0} role="region" aria-label="Routes and their health">
          <table>
            <thead>
              <tr>
                <th scope="col">Route</th>
                <th scope="col">Provider</th>
                <th scope="col">State</th>
                <th scope="col">Messages</th>
                <th scope="col">Failed</th>
                <th scope="col">Submit success</th>
                <th scope="col">Delivery rate</th>
                <th scope="col">Latency p50 / p95</th>
                <th scope="col">Commonest failure</th>
              </tr>
            </thead>
            <tbody>
              {list.map((route) => {
                const figures = byRoute.get(route.id);
                return (
                  <tr key={route.id}>
                    <td>
                      {route.name} <span className="help">#{route.id}</span>
                    </td>
                    <td>{route.provider}</td>
                    <td>{route.is_active ? 'active' : 'inactive'}</td>
                    <td>{figures?.messages ?? 0}</td>
                    <td>{figures ? figures.by_status.failed + figures.by_status.undelivered : 0}</td>
                    <td>
                      <SubmitSuccess figures={figures} />
                    </td>
                    <td>{formatPercent(figures?.delivery_rate)}</td>
                    <td>{figures ? `${latency(figures.latency_ms.p50)} / ${latency(figures.latency_ms.p95)}` : '—'}</td>
                    <td>{figures?.failures[0] ? `${figures.failures[0].code} (${figures.failures[0].count})` : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
