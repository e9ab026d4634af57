import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap } from '../../api/client';
import { Confirm } from '../../components/Confirm';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatTime } from '../../lib/format';
import { useRole } from '../../lib/session-context';
import { useListParams } from '../../lib/use-page-param';

/** Blocks a number for every account, or for one (admin). */
function AddEntry() {
  const queryClient = useQueryClient();
  const [number, setNumber] = useState('');
  const [accountId, setAccountId] = useState('');
  const [reason, setReason] = useState('');
  const add = useMutation({
    mutationFn: () =>
      unwrap(
        api.POST('/admin/blocklist', {
          body: { number: number.trim(), ...(accountId.trim() && { account_id: accountId.trim() }), ...(reason.trim() && { reason: reason.trim() }) },
        }),
      ),
    onSuccess: () => {
      setNumber('');
      setReason('');
      void queryClient.invalidateQueries({ queryKey: ['admin-blocklist'] });
    },
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    add.mutate();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="add-block">
      <h2 id="add-block">Block a number</h2>
      <div className="inline-form">
        <label>
          Number (E.164)
          <input required inputMode="tel" placeholder="+447400123456" value={number} onChange={(event) => setNumber(event.target.value)} />
        </label>
        <label>
          Account (optional: every account when empty)
          <input value={accountId} onChange={(event) => setAccountId(event.target.value)} />
        </label>
        <label>
          Reason
          <input maxLength={500} value={reason} onChange={(event) => setReason(event.target.value)} />
        </label>
        <button type="submit" disabled={add.isPending}>
          Add to blocklist
        </button>
      </div>
      <ErrorNotice error={add.error} />
    </form>
  );
}

/** The numbers no message may go to, for every account or for one. */
export function Blocklist() {
  const queryClient = useQueryClient();
  const role = useRole();
  const { params, page, setPage, setFilters } = useListParams();
  const number = params.get('number') ?? '';
  const [text, setText] = useState(number);
  const entries = useQuery({
    queryKey: ['admin-blocklist', number, page],
    queryFn: () => unwrap(api.GET('/admin/blocklist', { params: { query: { page, limit: 25, ...(number && { number }) } } })),
  });
  const remove = useMutation({
    mutationFn: ({ entryNumber, accountId }: { entryNumber: string; accountId: string | null }) =>
      unwrap(api.DELETE('/admin/blocklist/{number}', { params: { path: { number: entryNumber }, query: accountId ? { account_id: accountId } : {} } })),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['admin-blocklist'] }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setFilters({ number: text.trim() });
  }
  const list = entries.data?.data ?? [];
  return (
    <>
      <h1>Blocklist</h1>
      {role('admin') && <AddEntry />}
      <form className="filters" role="search" aria-label="Blocklist" onSubmit={submit}>
        <label>
          Number
          <input type="search" inputMode="tel" value={text} onChange={(event) => setText(event.target.value)} />
        </label>
        <div className="filter-actions">
          <button type="submit">Search</button>
        </div>
      </form>
      <ErrorNotice error={entries.error ?? remove.error} />
      {entries.data && list.length === 0 && <EmptyState>{number ? 'This number is not blocked.' : 'No number is blocked.'}</EmptyState>}
      {list.length > 0 && entries.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Number</th>
                  <th scope="col">Account</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Added</th>
                  {role('admin') && <th scope="col">Remove</th>}
                </tr>
              </thead>
              <tbody>
                {list.map((entry) => (
                  <tr key={entry.id}>
                    <td>{entry.number}</td>
                    <td>
                      {entry.account_id ? (
                        <Link to={`/operator/accounts/${entry.account_id}`}>
                          <code>{entry.account_id}</code>
                        </Link>
                      ) : (
                        'every account'
                      )}
                    </td>
                    <td>{entry.reason ?? '—'}</td>
                    <td>{formatTime(entry.created_at)}</td>
                    {role('admin') && (
                      <td>
                        <Confirm
                          label={`Remove ${entry.number}`}
                          question="Let messages go to this number again?"
                          confirmLabel="Remove"
                          onConfirm={() => remove.mutate({ entryNumber: entry.number, accountId: entry.account_id })}
                          disabled={remove.isPending}
                        />
                      </td>
                    )}
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
