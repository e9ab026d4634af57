import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, unwrap, type QueryOf } from '../../api/client';
import { Confirm } from '../../components/Confirm';
import { EmptyState } from '../../components/EmptyState';
import { ErrorNotice } from '../../components/ErrorNotice';
import { Pagination } from '../../components/Pagination';
import { formatTime } from '../../lib/format';
import { useRole } from '../../lib/session-context';
import { useListParams } from '../../lib/use-page-param';

type Status = NonNullable<QueryOf<'adminListSenders'>['status']>;
const STATUSES: Status[] = ['pending', 'approved', 'rejected', 'suspended'];
type Decision = 'approve' | 'reject' | 'suspend';

/** The senders of every account, the pending ones first in view: the approval queue, searchable by the sender's text. */
export function Senders() {
  const queryClient = useQueryClient();
  const role = useRole();
  const { params, page, setPage, setFilters } = useListParams();
  // The queue is what an operator comes for: without a status in the URL, the pending senders
  // ("any" in the URL is the choice of every status, so that it does not fall back to the queue).
  const chosenInUrl = params.get('status') ?? 'pending';
  const status = (chosenInUrl === 'any' ? '' : chosenInUrl) as Status | '';
  const senderId = params.get('sender_id') ?? '';
  const [text, setText] = useState(senderId);
  const [chosen, setChosen] = useState<Status | ''>(status);
  const senders = useQuery({
    queryKey: ['admin-senders', status, senderId, page],
    queryFn: () =>
      unwrap(api.GET('/admin/senders', { params: { query: { page, limit: 25, ...(status && { status }), ...(senderId && { sender_id: senderId }) } } })),
  });
  const decide = useMutation({
    mutationFn: ({ id, decision }: { id: string; decision: Decision }) => {
      const path = { params: { path: { id } } };
      if (decision === 'approve') return unwrap(api.POST('/admin/senders/{id}/approve', path));
      if (decision === 'reject') return unwrap(api.POST('/admin/senders/{id}/reject', path));
      return unwrap(api.POST('/admin/senders/{id}/suspend', path));
    },
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: ['admin-senders'] }),
  });
  function submit(event: FormEvent) {
    event.preventDefault();
    setFilters({ status: chosen || 'any', sender_id: text.trim() });
  }
  const list = senders.data?.data ?? [];
  return (
    <>
      <h1>Senders</h1>
      <form className="filters" role="search" aria-label="Senders" onSubmit={submit}>
        <label>
          Sender ID
          <input type="search" maxLength={64} value={text} onChange={(event) => setText(event.target.value)} />
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
      <ErrorNotice error={senders.error ?? decide.error} />
      {senders.data && list.length === 0 && (
        <EmptyState>{status === 'pending' ? 'No sender waits for approval.' : 'No sender matches — change the search.'}</EmptyState>
      )}
      {list.length > 0 && senders.data && (
        <>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Sender ID</th>
                  <th scope="col">Account</th>
                  <th scope="col">Type</th>
                  <th scope="col">Country</th>
                  <th scope="col">Status</th>
                  <th scope="col">Registered</th>
                  {role('admin') && <th scope="col">Decision</th>}
                </tr>
              </thead>
              <tbody>
                {list.map((sender) => (
                  <tr key={sender.id}>
                    <td>{sender.sender_id}</td>
                    <td>
                      <Link to={`/operator/accounts/${sender.account_id}`}>
                        <code>{sender.account_id}</code>
                      </Link>
                    </td>
                    <td>{sender.type}</td>
                    <td>{sender.country_code ?? '—'}</td>
                    <td>
                      <span className={`status status-${sender.status}`}>{sender.status}</span>
                    </td>
                    <td>{formatTime(sender.created_at)}</td>
                    {role('admin') && (
                      <td className="actions">
                        {(sender.status === 'pending' || sender.status === 'suspended') && (
                          <button
                            type="button"
                            aria-label={`Approve ${sender.sender_id}`}
                            onClick={() => decide.mutate({ id: sender.id, decision: 'approve' })}
                            disabled={decide.isPending}
                          >
                            Approve
                          </button>
                        )}
                        {sender.status === 'pending' && (
                          <Confirm
                            label={`Reject ${sender.sender_id}`}
                            question="Reject this sender?"
                            confirmLabel="Reject"
                            onConfirm={() => decide.mutate({ id: sender.id, decision: 'reject' })}
                            disabled={decide.isPending}
                          />
                        )}
                        {sender.status === 'approved' && (
                          <Confirm
                            label={`Suspend ${sender.sender_id}`}
                            question="Suspend this sender? Its messages are refused until it is approved again."
                            confirmLabel="Suspend"
                            onConfirm={() => decide.mutate({ id: sender.id, decision: 'suspend' })}
                            disabled={decide.isPending}
                          />
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pagination pagination={senders.data.pagination} onPage={setPage} />
        </>
      )}
    </>
  );
}
