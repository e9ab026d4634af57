import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type QueryOf } from '../../api/client';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatTime } from '../../lib/format';
import { useListParams } from '../../lib/use-page-param';

type Query = QueryOf<'adminListAuditLog'>;
const FILTERS = ['operator_id', 'account_id', 'action'] as const;
/** Suggestions only: actions are an open set, and the filter takes any. */
const KNOWN_ACTIONS = [
  'account.create',
  'account.credit',
  'account.note',
  'account.suspend',
  'account.reactivate',
  'account.close',
  'operator.create',
  'operator.revoke',
  'event.resend',
];

/** What operators did, newest first, filtered by operator, account and action; each entry names its operator. */
export function AuditLog() {
  const { params, page, setPage, setFilters } = useListParams();
  const current = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const [form, setForm] = useState(current);
  const query: Query = {
    page,
    limit: 25,
    ...(current.operator_id && { operator_id: current.operator_id }),
    ...(current.account_id && { account_id: current.account_id }),
    ...(current.action && { action: current.action }),
  };
  const entries = useQuery({ queryKey: ['admin-audit-log', query], queryFn: () => unwrap(api.GET('/admin/audit-log', { params: { query } })) });
  function submit(event: FormEvent) {
    event.preventDefault();
    setFilters({ operator_id: form.operator_id.trim(), account_id: form.account_id.trim(), action: form.action.trim() });
  }
  const field = (name: keyof typeof form) => ({
    value: form[name],
    onChange: (event: { target: { value: string } }) => setForm({ ...form, [name]: event.target.value }),
  });
  const list = entries.data?.data ?? [];
  return (
    <>
      <h1>Audit log</h1>
      <form className="filters" role="search" aria-label="Audit log" onSubmit={submit}>
        <label>
          Operator (opr_… or root)
          <input type="search" {...field('operator_id')} />
        </label>
        <label>
          Account
          <input type="search" placeholder="acct_…" {...field('account_id')} />
        </label>
        <label>
          Action
          <input type="search" list="audit-actions" {...field('action')} />
          <datalist id="audit-actions">
            {KNOWN_ACTIONS.map((action) => (
              <option key={action} value={action} />
            ))}
          </datalist>
        </label>
        <div className="filter-actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorNotice error={entries.error} />
      {entries.data && list.length === 0 && <EmptyState>No entry matches — change the filters.</EmptyState>}
      {list.length > 0 && entries.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Operator</th>
                  <th scope="col">Action</th>
                  <th scope="col">Target</th>
                  <th scope="col">Reason or note</th>
                </tr>
              </thead>
              <tbody>
                {list.map((entry) => (
                  <tr key={entry.id} data-testid="audit-entry">
                    <td>{formatTime(entry.created_at)}</td>
                    <td>
                      <Link to={`/operator/audit-log?operator_id=${entry.operator.id ?? 'root'}`}>{entry.operator.name}</Link>
                    </td>
                    <td>
                      <code>{entry.action}</code>
                    </td>
                    <td>
                      {entry.target_type === 'account' ? (
                        <Link to={`/operator/accounts/${entry.target_id}`}>
                          <code>{entry.target_id}</code>
                        </Link>
                      ) : (
                        <>
                          {entry.target_type} <code>{entry.target_id}</code>
                        </>
                      )}
                    </td>
                    <td className="body-text">{entry.reason ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={entries.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
