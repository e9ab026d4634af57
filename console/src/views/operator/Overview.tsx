import { useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../api/client';
import { ErrorNotice } from '../../components/ErrorNotice';
import { formatPercent } from '../../lib/format';

/** The operator section's landing view: the whole installation's last 24 hours. Operator views are added beside it (navigation.tsx). */
export function Overview() {
  const stats = useQuery({ queryKey: ['admin-stats'], queryFn: () => unwrap(api.GET('/admin/stats')) });
  const totals = stats.data?.data.totals;
  return (
    <>
      <h1>Operator overview</h1>
      <ErrorNotice error={stats.error} />
      {totals && (
        <dl className="figures">
          <div>
            <dt>Messages, last 24 hours</dt>
            <dd>{totals.messages}</dd>
          </div>
          <div>
            <dt>Delivery rate</dt>
            <dd>{formatPercent(totals.delivery_rate)}</dd>
          </div>
          <div>
            <dt>Failed</dt>
            <dd>{totals.by_status.failed + totals.by_status.undelivered}</dd>
          </div>
        </dl>
      )}
    </>
  );
}
