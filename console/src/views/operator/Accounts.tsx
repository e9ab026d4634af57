import { useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type QueryOf } from '../../api/client';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatMoney, formatTime } from '../../lib/format';
import { useListParams } from '../../lib/use-page-param';

type Status = NonNullable<QueryOf<'adminListAccounts'>['status']>;
const STATUSES: Status[] = ['active', 'suspended', 'closed'];

/** Every account, searched by email or name and filtered by status; each opens its detail. */
export function Accounts() {
  const { params, page, setPage, setFilters } = useListParams();
  const q = params.get('q') ?? '';
  const status = (params.get('status') ?? '') as Status | '';
  const [text, setText] = useState(q);
  const [chosen, setChosen] = useState<Status | ''>(status);
  const accounts = useQuery({
    queryKey: ['admin-accounts', q, status, page],
    queryFn: () => unwrap(api.GET('/admin/accounts', { params: { query: { page, limit: 25, ...(q && { q }), ...(status && { status }) } } })),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setFilters({ q: text.trim(), status: chosen });
  }
  const list = accounts.data?.data ?? [];
  return (
    <>
      <h1>Accounts</h1>
      <form className="filters" role="search" aria-label="Accounts" onSubmit={submit}>
        <label>
          Email or name contains
          <input type="search" value={text} onChange={(event) => setText(event.target.value)} />
        </label>
        <label>
          Status
          <select value={chosen} onChange={(event) => setChosen(event.target.value as Status | '')}>
            <option value="">Any</option>
            {STATUSES.map((value) => (
              <option key={value}>{value}</option>
            ))}
          </select>
        </label>
        <div className="filter-actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorNotice error={accounts.error} />
      {accounts.data && list.length === 0 && <EmptyState>No account matches — change the search.</EmptyState>}
      {list.length > 0 && accounts.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Account</th>
                  <th scope="col">Email</th>
                  <th scope="col">Status</th>
                  <th scope="col">Balance</th>
                  <th scope="col">Created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((account) => (
                  <tr key={account.id}>
                    <td>
                      <Link to={`/operator/accounts/${account.id}`}>{account.name}</Link>
                    </td>
                    <td>{account.email}</td>
                    <td>
                      <span className={`status status-${account.status}`}>{account.status}</span>
                    </td>
                    <td>{formatMoney(account.balance, account.currency)}</td>
                    <td>{formatTime(account.created_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={accounts.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
